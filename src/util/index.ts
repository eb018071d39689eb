export { newId, isUuid1, uuidHex } from './ids.js';
export { chunkId, sha256Hex } from './hash.js';
export { nowMs, formatDateTime } from './time.js';
export { isPlainObject, deepMerge, pyListRepr, jsonList } from './json.js';
export { duplicateName, fileSuffix, utf8Length } from './names.js';
