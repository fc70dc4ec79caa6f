/** The environment switch that lets a developer film and import from their own machine and network. */
export const LOCAL_NETWORK_SWITCH = "ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT";

/** Appended to every refusal of a non-public address: how to allow it while developing. */
export const LOCAL_NETWORK_HINT = `to film or import from this machine or its local network while developing, start the server with ${LOCAL_NETWORK_SWITCH}=1 (refused when NODE_ENV=production)`;

/**
 * True for the classifications the development switch opens: loopback, private (RFC 1918) and unique
 * local IPv6. Link-local (cloud metadata at 169.254.169.254), multicast, reserved and translated forms
 * stay closed even then.
 */
export function isLocalNetworkReason(why: string | null): boolean {
  return why !== null && /^(loopback|private|unique local)/.test(why);
}
