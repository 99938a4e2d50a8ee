/**
 * A device's share of something a request holds for long (SSE streams, blocking waits): each
 * device holds at most `perDevice` at once, so one device of the mesh cannot take them all and
 * leave the others refused. Past it, LIMIT_EXCEEDED names the device and the limit's setting.
 */
import { ShroomsError } from '@shrooms/protocol';

export class DeviceShares {
  /** Places held per device (only devices holding one or more). */
  private held = new Map<string, number>();

  constructor(
    readonly perDevice: number,
    /** The limit's name (`details.limit`) and what is held, as a refusal says it ("streams"). */
    private readonly name: { limit: string; what: string },
  ) {}

  /** Takes a place for `device`, or throws LIMIT_EXCEEDED; returns its release (once). */
  take(device: string): () => void {
    const n = this.held.get(device) ?? 0;
    if (n >= this.perDevice)
      throw new ShroomsError(
        'LIMIT_EXCEEDED',
        `${device} holds ${this.perDevice} ${this.name.what} open on this gateway already; retry later`,
        {
          limit: this.name.limit,
          max: this.perDevice,
        },
      );
    this.held.set(device, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(device) ?? 1) - 1;
      if (left > 0) this.held.set(device, left);
      else this.held.delete(device);
    };
  }
}
