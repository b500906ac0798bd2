/**
 * `mempalace mcp --setup`: the exact commands that register this server with common MCP hosts,
 * in the stdio form (the host starts `mempalace mcp`) and the HTTP form (a running server).
 */
export interface McpSetupOptions {
  /** The command that starts the stdio server (default `mempalace`). */
  command?: string;
  /** Arguments after the command (default `["mcp"]`). */
  args?: string[];
  /** The HTTP endpoint (default http://127.0.0.1:8765/mcp). */
  httpUrl?: string;
  /** Palace directory to pin with --palace, if any. */
  palace?: string;
}

function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:@=-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`;
}

export function mcpSetupText(opts: McpSetupOptions = {}): string {
  const command = opts.command ?? 'mempalace';
  const args = [...(opts.args ?? ['mcp']), ...(opts.palace ? ['--palace', opts.palace] : [])];
  const url = opts.httpUrl ?? 'http://127.0.0.1:8765/mcp';
  const argv = [command, ...args].map(shellQuote).join(' ');
  const stdioJson = JSON.stringify({ mcpServers: { mempalace: { command, args } } }, null, 2);
  const httpJson = JSON.stringify({ mcpServers: { mempalace: { type: 'http', url, headers: { Authorization: 'Bearer <token>' } } } }, null, 2);
  const vscode = JSON.stringify({ name: 'mempalace', command, args });
  return `MemPalace MCP server — add it to your MCP host

Local (stdio; the host starts the server):

  Claude Code:   claude mcp add mempalace -- ${argv}
  Codex CLI:     codex mcp add mempalace -- ${argv}
  Gemini CLI:    gemini mcp add mempalace -- ${argv}
  VS Code:       code --add-mcp ${shellQuote(vscode)}
  Claude Desktop / Cursor (claude_desktop_config.json, ~/.cursor/mcp.json):
${stdioJson.replace(/^/gm, '    ')}

Remote (Streamable HTTP; the server is already running, one bearer token per agent):

  Claude Code:   claude mcp add --transport http --header ${shellQuote('Authorization: Bearer <token>')} mempalace ${url}
  Gemini CLI:    gemini mcp add --transport http --header ${shellQuote('Authorization: Bearer <token>')} mempalace ${url}
  Cursor (~/.cursor/mcp.json):
${httpJson.replace(/^/gm, '    ')}

Read-only mode: add --read-only to the arguments or set MEMPALACE_MCP_READ_ONLY=1.
`;
}
