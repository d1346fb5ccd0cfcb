/**
 * Shared by the Contacts, Segments, Topics and Broadcasts pages: their API types, the pickers' queries and
 * small helpers (debounce, time-zone offsets).
 */
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, unwrap } from '../api/client';
import { broadcastKeys, contactKeys, domainKeys, segmentKeys, topicKeys } from '../api/keys';
import type { paths } from '../api/generated/schema';

export type Contact = paths['/v1/contacts/{contactId}']['get']['responses'][200]['content']['application/json'];
export type ContactStatus = Contact['status'];
export type ActivityEvent =
  paths['/v1/contacts/{contactId}/activity']['get']['responses'][200]['content']['application/json']['data'][number];
export type ImportJob =
  paths['/v1/contacts/imports/{importId}']['get']['responses'][200]['content']['application/json'];
export type Topic = paths['/v1/topics/{topicId}']['get']['responses'][200]['content']['application/json'];
export type Segment = paths['/v1/segments/{segmentId}']['get']['responses'][200]['content']['application/json'];
export type SegmentPreview = paths['/v1/segments/preview']['post']['responses'][200]['content']['application/json'];
export type Broadcast = paths['/v1/broadcasts/{broadcastId}']['get']['responses'][200]['content']['application/json'];
export type BroadcastStatus = Broadcast['status'];
export type BroadcastStats = NonNullable<Broadcast['stats']>;
export type BroadcastUpdate = NonNullable<
  paths['/v1/broadcasts/{broadcastId}']['put']['requestBody']
>['content']['application/json'];
export type Delivery =
  paths['/v1/broadcasts/{broadcastId}/deliveries']['get']['responses'][200]['content']['application/json']['data'][number];
export type DeliveryStatus = Delivery['status'];

export const CONTACT_STATUSES: ContactStatus[] = ['SUBSCRIBED', 'PENDING', 'UNSUBSCRIBED', 'BOUNCED', 'COMPLAINED'];

/** A contact status in words. */
export function statusLabel(s: string): string {
  return s.charAt(0) + s.slice(1).toLowerCase();
}

export const CONTACT_TONES: Record<ContactStatus, 'success' | 'warning' | 'neutral' | 'danger'> = {
  SUBSCRIBED: 'success',
  PENDING: 'warning',
  UNSUBSCRIBED: 'neutral',
  BOUNCED: 'danger',
  COMPLAINED: 'danger',
};

/** The topics of the workspace, for pickers (the first 100). */
export function useTopics() {
  return useQuery({
    queryKey: topicKeys.picker(),
    queryFn: async () => unwrap(await api.GET('/v1/topics', { params: { query: { limit: 100 } } })).data,
    staleTime: 30_000,
  });
}

/** The workspace's tags, most used first (the first 1,000), for the tag filter and pickers. */
export function useTags() {
  return useQuery({
    queryKey: contactKeys.tags(),
    queryFn: async () => unwrap(await api.GET('/v1/tags', { params: { query: { limit: 1000 } } })).data,
    staleTime: 30_000,
  });
}

/** The workspace's SENT broadcasts, newest first, for pickers (the first 100; an engagement condition's broadcast). */
export function useSentBroadcasts(enabled = true) {
  return useQuery({
    queryKey: broadcastKeys.sentPicker(),
    queryFn: async () =>
      unwrap(await api.GET('/v1/broadcasts', { params: { query: { limit: 100, status: 'SENT' } } })).data.map((b) => ({
        id: b.id,
        name: b.name,
      })),
    staleTime: 30_000,
    enabled,
  });
}

/** The segments of the workspace, for pickers (the first 100). */
export function useSegments() {
  return useQuery({
    queryKey: segmentKeys.picker(),
    queryFn: async () => unwrap(await api.GET('/v1/segments', { params: { query: { limit: 100 } } })).data,
    staleTime: 30_000,
  });
}

/** The names of the workspace's verified sending domains. */
export function useVerifiedDomains() {
  return useQuery({
    queryKey: domainKeys.verified(),
    queryFn: async () =>
      unwrap(await api.GET('/v1/domains', { params: { query: { limit: 100 } } }))
        .data.filter((d) => d.status === 'VERIFIED')
        .map((d) => d.name),
    staleTime: 60_000,
  });
}

/** `value`, once it (or `key`, what tells its versions apart, when given) has stopped changing for `ms`. */
export function useDebounced<T>(value: T, ms: number, key: unknown = value): T {
  const [v, setV] = useState(value);
  useEffect(() => {
    // `value` of the render where `key` last changed: the same version until it changes again.
    const t = setTimeout(() => setV(value), ms);
    return () => clearTimeout(t);
  }, [key, ms]);
  return v;
}

/** The browser's offset from UTC at `date`, as `UTC+02:00`. */
export function utcOffset(date: Date): string {
  const m = -date.getTimezoneOffset();
  const sign = m >= 0 ? '+' : '-';
  const a = Math.abs(m);
  return `UTC${sign}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
}

/** The user's time zone name (Europe/Berlin), when the browser tells. */
export function timeZoneName(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time';
  } catch {
    return 'local time';
  }
}

/** A `datetime-local` value (local wall time) for an ISO instant, and back. */
export function toLocalInput(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
export function fromLocalInput(local: string): Date | null {
  if (!local) return null;
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? null : d;
}
