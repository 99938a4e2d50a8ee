/** An idle node process (with the IPC channel): what a process costs before it does anything (memory baseline). */
import { serve } from '../child.js';

serve(async () => undefined, { pid: process.pid });
