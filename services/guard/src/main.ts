/** The guard process (`node --import tsx services/guard/src/main.ts`): wiring only, see run.ts. */
import { runGuard } from './run.js';

await runGuard();
