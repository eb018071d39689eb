/**
 * MCP over streamable HTTP (stateless, JSON responses, as RAGFlow's MCP server runs it): each POST
 * to the endpoint gets its own server and transport over the one Client.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Client } from '../../client/index.js';
import { createMcpServer, type McpServerOptions } from './server.js';

export interface McpHttpOptions extends McpServerOptions {
  /** The TCP port (0: any free one). @default 9382 (RAGFlow's MCP port) */
  port?: number;
  /**
   * The address to listen on. On a loopback address, requests whose Host header names another
   * host are refused (DNS rebinding). There is no authentication: keep it on loopback, or put it
   * behind a proxy that authenticates. @default '127.0.0.1'
   */
  host?: string;
  /** The endpoint's path. @default '/mcp' */
  path?: string;
}

export interface RunningMcpHttp {
  /** The endpoint, e.g. `http://127.0.0.1:9382/mcp`. */
  url: string;
  port: number;
  /** Stops listening and ends the open requests (the Client stays open). */
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

function rpcError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/**
 * Serves `client` over MCP's streamable HTTP transport until `close()`.
 * @example
 * const mcp = await serveMcpHttp(client, { port: 9382 });   // mcp.url → http://127.0.0.1:9382/mcp
 */
export async function serveMcpHttp(client: Client, opts: McpHttpOptions = {}): Promise<RunningMcpHttp> {
  const host = opts.host ?? '127.0.0.1';
  const path = opts.path ?? '/mcp';
  let allowedHosts: string[] | undefined;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if ((req.url ?? '').split('?')[0] !== path) return rpcError(res, 404, `Not found: the MCP endpoint is ${path}`);
    // Stateless: no session to resume (GET) or end (DELETE).
    if (req.method !== 'POST') return rpcError(res, 405, 'Method not allowed.');
    const server = await createMcpServer(client, opts);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined, enableJsonResponse: true,
      ...(allowedHosts ? { enableDnsRebindingProtection: true, allowedHosts } : {}),
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  };
  const http = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) rpcError(res, 500, e instanceof Error ? e.message : String(e));
      else res.destroy();
    });
  });
  await new Promise<void>((ok, fail) => {
    http.once('error', fail);
    http.listen(opts.port ?? 9382, host, () => ok());
  });
  const { port } = http.address() as AddressInfo;
  if (LOOPBACK.has(host)) allowedHosts = [...LOOPBACK].map((h) => (h === '::1' ? `[::1]:${port}` : `${h}:${port}`));
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}${path}`,
    port,
    close: () => new Promise<void>((ok) => {
      http.close(() => ok());
      http.closeAllConnections();
    }),
  };
}
