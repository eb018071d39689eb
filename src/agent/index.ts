/**
 * Agents: RAGFlow v0.20+ canvas DSL, run in-process (reference §10). `Canvas` runs a DSL and
 * yields RAGFlow's events; `validateDsl` refuses, before saving, a DSL that uses what ragloom
 * cannot run; the sandbox runs CodeExec's JavaScript and Python.
 */
export { Canvas, CANCELED, lazyText, materialize } from './canvas.js';
export { validateDsl, SUPPORTED_COMPONENTS, SUPPORTED_TOOLS, WEB_TOOLS, DATAFLOW_COMPONENTS, VARIABLE_REF } from './catalog.js';
export type { Dsl, DslComponent } from './catalog.js';
export type { CanvasEvent, CanvasChunk, DocAgg, RuntimeDeps, RunOptions, RetrieveRequest, LazyText } from './types.js';
export { COMPONENTS } from './components/index.js';
