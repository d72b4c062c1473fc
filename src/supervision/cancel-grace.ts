/**
 * The cancel grace, declared once: how long an agent has to answer a prompt the client
 * cancelled before the prompt is answered `cancelled` for it (its late updates then dropped).
 * The session machine, the agent server's bare-agent turns and the host agent fall back to it
 * when a native agent names no `cancelGraceMs` of its own. As OTP's worker shutdown timeout,
 * it is the patience with a child asked to stop before it is stopped for it.
 */

/** 5 s: an agent CLI stops a turn within a second when it is alive; past this it is not answering. */
export const defaultCancelGraceMs = 5000;
