/**
 * How long what a client already asked may still run once its input ended (EOF) or the
 * daemon is stopping, declared once, in a module that loads nothing: the agent server
 * (`warden acp`), `warden serve --drain-timeout` and the stdio bridge of
 * `warden acp --connect` (which must start fast) all fall back to it.
 */

/** 30 s: short turns and scripted setup finish; an editor gone without closing stdout keeps no agent long. */
export const defaultDrainTimeoutMs = 30_000;
