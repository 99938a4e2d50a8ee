/** What `up` prints once the mesh is up: where everything is, and a first ask to try. */
export interface UpDetails {
  machine: string;
  natsUrl: string;
  monitorUrl?: string;
  gatewayUrl: string;
  session: string;
  harness: string;
  stateDir: string;
  meshFile: string;
  /** The operators' NATS login, when up runs its own server with users. */
  adminEnvFile?: string;
}

export function upBanner(d: UpDetails): string {
  const a2a = `${d.gatewayUrl}/a2a/${d.session}`;
  // With the trailing slash, every card resolver finds the session's card from this URL as given
  // (a2a-js's `createFromUrl` drops a last segment that has none).
  const endpoint = `${a2a}/`;
  return [
    `shrooms agent mesh is up on ${d.machine}`,
    `  NATS          ${d.natsUrl}${d.monitorUrl ? `   (monitoring ${d.monitorUrl})` : ''}`,
    `  gateway       ${d.gatewayUrl}   (machine card ${d.gatewayUrl}/.well-known/agent-card.json)`,
    `  demo session  ${d.machine}/${d.session} (${d.harness} harness)`,
    `  A2A endpoint  ${endpoint}   (JSON-RPC and HTTP+JSON; A2A 1.0 and 0.3)`,
    `  agent card    ${endpoint}.well-known/agent-card.json`,
    `  state, logs   ${d.stateDir}   (shrooms-agent logs [PART|SESSION])`,
    `  joining       ${d.meshFile}: bridge, mcp, a2a and config started here find this mesh with no flags`,
    ...(d.adminEnvFile
      ? [
          `  NATS users    one per part (deploy/nats); a bridge you start by hand gets one for its session alone`,
          `                operators (nats CLI): set -a; . ${d.adminEnvFile}; set +a`,
        ]
      : []),
    '',
    'Try:',
    `  curl -s ${a2a} -H 'content-type: application/json' -H 'A2A-Version: 1.0' \\`,
    `    -d '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}'`,
    '',
    'Press Ctrl-C to stop.',
    '',
  ].join('\n');
}
