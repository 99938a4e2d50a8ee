/** What `shrooms-agent up` prints once the mesh is up, read back the way a person reads it. */
export interface UpPrinted {
  /** The A2A endpoint, as printed (with its trailing slash). */
  endpoint: string;
  gatewayUrl: string;
  natsUrl: string;
}

export function parseUpOutput(printed: string): UpPrinted {
  const pick = (re: RegExp) => {
    const m = re.exec(printed);
    if (!m) throw new Error(`'up' did not print ${re}:\n${printed}`);
    return m[1]!;
  };
  return {
    endpoint: pick(/A2A endpoint\s+(\S+)/),
    gatewayUrl: pick(/gateway\s+(http:\/\/\S+)/),
    natsUrl: pick(/NATS\s+(nats:\/\/\S+)/),
  };
}
