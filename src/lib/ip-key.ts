import { normalizeIP } from '@fastify/rate-limit';

/**
 * The address a limit counts by: an IPv4 address as it is, an IPv6 one by its /64 (one subscriber's network: a
 * client that owns a /64 would otherwise get a fresh count with every address of it), an IPv4-mapped one as IPv4.
 * The rate-limit plugin's own normaliser, so that every limit of the service (the /v1 one included) counts alike;
 * something that is not an address is counted as it is.
 */
export function ipKey(ip: string): string {
  try {
    return normalizeIP(ip, 64);
  } catch {
    return ip;
  }
}
