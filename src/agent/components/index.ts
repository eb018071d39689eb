/** The component types the runtime executes, by RAGFlow component name (see ../catalog.ts). */
import type { ComponentImpl } from '../node.js';
import { BEGIN, USER_FILL_UP } from './forms.js';
import { LLM, Agent } from './llm.js';
import { MESSAGE } from './message.js';
import { CATEGORIZE } from './categorize.js';
import { ITERATION, ITERATION_ITEM, LOOP, LOOP_ITEM, EXIT_LOOP } from './flow.js';
import { SWITCH, VARIABLE_ASSIGNER, VARIABLE_AGGREGATOR, STRING_TRANSFORM } from './data.js';
import { TOOL_COMPONENTS } from './tools.js';

export const COMPONENTS: Record<string, ComponentImpl> = {
  Begin: BEGIN,
  UserFillUp: USER_FILL_UP,
  LLM,
  Agent,
  Message: MESSAGE,
  Categorize: CATEGORIZE,
  Switch: SWITCH,
  Iteration: ITERATION,
  IterationItem: ITERATION_ITEM,
  Loop: LOOP,
  LoopItem: LOOP_ITEM,
  ExitLoop: EXIT_LOOP,
  VariableAssigner: VARIABLE_ASSIGNER,
  VariableAggregator: VARIABLE_AGGREGATOR,
  StringTransform: STRING_TRANSFORM,
  ...TOOL_COMPONENTS,
};
