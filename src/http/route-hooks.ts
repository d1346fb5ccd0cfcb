import type { RouteOptions } from 'fastify';

type HookName = 'onRequest' | 'preValidation' | 'preHandler' | 'onSend';

/**
 * Appends a hook to one route as it is registered (from an onRoute hook). For hooks only some routes
 * need: a route without them pays nothing per request, where an instance-wide hook runs, and decides,
 * on every request.
 */
export function addRouteHook<N extends HookName>(route: RouteOptions, name: N, hook: unknown): void {
  const current = route[name] as unknown;
  const list = current === undefined ? [] : Array.isArray(current) ? current : [current];
  (route as unknown as Record<string, unknown>)[name] = [...list, hook];
}
