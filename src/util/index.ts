export { newId, isUuid1, uuidHex } from './ids.js';
export { chunkId, sha256Hex } from './hash.js';
export { nowMs, formatDateTime } from './time.js';
export { isPlainObject, deepMerge, pyListRepr, pyStrRepr, jsonList, jsonEqual, parseJson } from './json.js';
export { duplicateName, fileSuffix, utf8Length } from './names.js';
export { importOptional, MissingPackageError, OPTIONAL_PACKAGES } from './optional.js';
export type { OptionalPackage } from './optional.js';
export { clip, serverErrorMessage } from './http.js';
export { faultPoint } from './fault.js';
