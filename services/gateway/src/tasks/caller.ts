/** Who sent a request: the device the mesh names (verified) and the session it claims. */
export interface Caller {
  /** Verified device, `DEVICE.MESH`, or this machine's name for local requests. */
  device: string;
  /** The verified device's machine name on the mesh (`pi5` of `pi5.home`; this machine for itself). */
  machine: string;
  /** True when the request came from this machine itself. */
  self: boolean;
  /** Claimed `MACHINE/SESSION` (from `shrooms/from` metadata), shown beside the device. */
  from?: string;
}
