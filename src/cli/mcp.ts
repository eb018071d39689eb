/**
 * `ragloom mcp`: the database as an MCP server (src/integrations/mcp), over stdio for a desktop
 * assistant or over streamable HTTP. The MCP SDK is an optional package, loaded here on first use.
 */
import { Client } from '../client/index.js';
import { MissingPackageError } from '../util/index.js';
import { type Command, intFlag, stringFlag, dbFlag, existingDatabase, untilStopped, DB_OPTION } from './args.js';

const PACKAGES = ['@modelcontextprotocol/sdk', 'zod'] as const;

/** The MCP module; a missing SDK (or zod) is a MissingPackageError naming both and the install command. */
async function loadMcp() {
  try {
    const [mcp, stdio] = await Promise.all([import('../integrations/mcp/index.js'), import('@modelcontextprotocol/sdk/server/stdio.js')]);
    return { ...mcp, StdioServerTransport: stdio.StdioServerTransport };
  } catch (e) {
    const err = e as { code?: string; message?: string };
    if ((err?.code === 'ERR_MODULE_NOT_FOUND' || err?.code === 'MODULE_NOT_FOUND') && PACKAGES.some((p) => err.message?.includes(`'${p}'`))) {
      throw new MissingPackageError(PACKAGES, '`ragloom mcp`', { cause: e });
    }
    throw e;
  }
}

export const mcpCommand: Command = {
  spec: {
    name: 'mcp', synopsis: '[--db FILE] [--read-only] [--http [--port N] [--host H]]',
    summary: "serve the database to AI assistants over MCP (Model Context Protocol): RAGFlow's MCP tools and ragloom's, on stdio or HTTP",
    options: {
      db: DB_OPTION,
      'read-only': { type: 'boolean', help: 'open the database read-only and leave out the tools that write' },
      http: { type: 'boolean', help: 'streamable HTTP at http://HOST:PORT/mcp instead of stdio' },
      port: { type: 'string', arg: 'N', help: 'the TCP port with --http (0-65535; 0: any free port)', default: '9382' },
      host: { type: 'string', arg: 'H', help: 'the address to listen on with --http (no authentication: keep it on loopback)', default: '127.0.0.1' },
    },
    details: `Tools: ragflow_retrieval, ragflow_list_datasets, ragflow_list_chats (RAGFlow's names and
arguments), ragloom_ask, ragloom_list_memories, ragloom_search_memory, ragloom_add_memory_message
(not with --read-only). Datasets are resources (ragloom://datasets/<id>). On stdio, stdout carries
the protocol only; the command ends when the client closes stdin, or on SIGINT/SIGTERM. With --http
it prints where it listens ({"url"} with --json) and runs until SIGINT/SIGTERM.
Needs the optional packages @modelcontextprotocol/sdk and zod (npm install @modelcontextprotocol/sdk zod).
An assistant's configuration: docs/integrations.md.`,
  },
  async run(c) {
    const http = c.values.http === true;
    const port = intFlag(c.values, 'port', { min: 0, max: 65535, default: 9382 });
    const host = stringFlag(c.values, 'host') ?? '127.0.0.1';
    const readOnly = c.values['read-only'] === true;
    const db = existingDatabase(dbFlag(c.values));
    const mcp = await loadMcp();
    const client = new Client({ path: db, ...(readOnly ? { readonly: true } : {}) });
    try {
      if (http) {
        const srv = await mcp.serveMcpHttp(client, { port, host, readOnly });
        if (c.json) c.out.write(`${JSON.stringify({ url: srv.url, db, read_only: readOnly })}\n`);
        else c.out.write(`ragloom MCP server for ${db} at ${srv.url}${readOnly ? ' (read-only)' : ''}\n`);
        await untilStopped();
        await srv.close();
        return 0;
      }
      const server = await mcp.createMcpServer(client, { readOnly });
      const transport = new mcp.StdioServerTransport();
      const closed = new Promise<void>((done) => { transport.onclose = done; });
      process.stdin.once('end', () => void server.close());
      await server.connect(transport);
      await untilStopped(closed);
      await server.close();
      return 0;
    } finally {
      await client.close();
    }
  },
};
