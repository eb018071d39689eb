export { startServer, SERVER_DEFAULTS } from './server.js';
export type { ServerOptions, RunningServer } from './server.js';
