export { MemoryFullError, messageCost, allocatorHooks } from '../store/index.js';
export type { NewMessage, Usage } from '../store/index.js';
export { ExtractionQueue, TASK_ATTEMPTS } from './tasks.js';
export type { TaskDeps } from './tasks.js';
export { extract, extractionSystemPrompt, extractionUserPrompt, parseExtraction, canExtract, typesToMask, maskToTypes, MEMORY_TYPES } from './extract.js';
