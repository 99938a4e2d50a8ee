/** An idle `node --import tsx` process: what a process costs before it does anything (memory baseline). */
import { serve } from '../child.js';

serve(async () => undefined, { pid: process.pid });
