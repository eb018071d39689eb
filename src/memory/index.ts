export { insertMessages, evictFor, resize, usage, messageCost, MemoryFullError, allocatorHooks } from './allocator.js';
export type { NewMessage, Usage } from './allocator.js';
export { ExtractionQueue, TASK_ATTEMPTS } from './tasks.js';
export type { TaskDeps } from './tasks.js';
export { extract, extractionSystemPrompt, extractionUserPrompt, parseExtraction, canExtract, typesToMask, maskToTypes, MEMORY_TYPES } from './extract.js';
