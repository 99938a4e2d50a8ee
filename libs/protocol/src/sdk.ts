/**
 * Conversion between our spec-JSON objects and `@a2a-js/sdk`'s ts-proto types. The SDK's own
 * `fromJSON`/`toJSON` do the work; these functions only pin the types at our boundary.
 */
import { AgentCard as SdkAgentCard, Message as SdkMessage, Task as SdkTask } from '@a2a-js/sdk';
import type { Message, Task } from './a2a.js';

export type { SdkAgentCard, SdkMessage, SdkTask };

export const toSdkTask = (t: Task): SdkTask => SdkTask.fromJSON(t);
export const fromSdkTask = (t: SdkTask): Task => SdkTask.toJSON(t) as Task;
export const toSdkMessage = (m: Message): SdkMessage => SdkMessage.fromJSON(m);
export const fromSdkMessage = (m: SdkMessage): Message => SdkMessage.toJSON(m) as Message;
export const cardToJson = (c: SdkAgentCard): Record<string, unknown> => SdkAgentCard.toJSON(c) as Record<string, unknown>;
export const cardFromJson = (j: unknown): SdkAgentCard => SdkAgentCard.fromJSON(j);
