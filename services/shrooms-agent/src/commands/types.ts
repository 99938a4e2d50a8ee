export interface Command {
  summary: string;
  /** Returns the exit code, or -1 for a long-running service that exits on its own. */
  run(args: string[]): Promise<number>;
}
