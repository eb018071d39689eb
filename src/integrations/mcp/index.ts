/**
 * ragloom as an MCP server (`ragloom/mcp`; peers: `@modelcontextprotocol/sdk` ^1.32 and `zod`):
 * RAGFlow's MCP tools and ragloom's own over any Client, over stdio or streamable HTTP.
 * `ragloom mcp --db kb.db` runs it from the command line. docs/integrations.md.
 */
export { createMcpServer, MCP_TOOLS } from './server.js';
export type { McpServerOptions } from './server.js';
export { serveMcpHttp } from './http.js';
export type { McpHttpOptions, RunningMcpHttp } from './http.js';
