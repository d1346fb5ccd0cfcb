/** The signed-in user's own sessions (the browsers they are signed in on), each signed out here. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { describeError } from '../../lib/problems';
import { api, unwrap } from '../../api/client';
import { userKeys } from '../../api/keys';
import type { paths } from '../../api/generated/schema';
import { Button, EmptyState, QueryState, StatusBadge, Table, useToast, type Column } from '../../components';
import { relative } from '../../lib/format';

type SessionRow = paths['/v1/session/sessions']['get']['responses'][200]['content']['application/json']['data'][number];

/** "Chrome 131 on Linux" from a User-Agent header; the header itself stays in the cell's title. */
function browserName(ua: string | null | undefined): string {
  if (!ua) return 'Unknown browser';
  const version = (re: RegExp) => re.exec(ua)?.[1]?.split('.')[0];
  const browser = /Edg\//.test(ua)
    ? `Edge ${version(/Edg\/([\d.]+)/)}`
    : /Firefox\//.test(ua)
      ? `Firefox ${version(/Firefox\/([\d.]+)/)}`
      : /HeadlessChrome\//.test(ua)
        ? `Headless Chrome ${version(/HeadlessChrome\/([\d.]+)/)}`
        : /Chrome\//.test(ua)
          ? `Chrome ${version(/Chrome\/([\d.]+)/)}`
          : /Safari\//.test(ua) && /Version\//.test(ua)
            ? `Safari ${version(/Version\/([\d.]+)/)}`
            : /curl\//.test(ua)
              ? 'curl'
              : null;
  const os = /iPhone|iPad/.test(ua)
    ? 'iOS'
    : /Android/.test(ua)
      ? 'Android'
      : /Windows/.test(ua)
        ? 'Windows'
        : /Mac OS X|Macintosh/.test(ua)
          ? 'macOS'
          : /CrOS/.test(ua)
            ? 'ChromeOS'
            : /Linux/.test(ua)
              ? 'Linux'
              : null;
  if (!browser) return ua.length > 60 ? `${ua.slice(0, 57)}…` : ua;
  return os ? `${browser} on ${os}` : browser;
}

export function MySessions() {
  const toast = useToast();
  const qc = useQueryClient();
  const q = useQuery({
    queryKey: userKeys.sessions(),
    queryFn: async () => unwrap(await api.GET('/v1/session/sessions')),
  });
  const end = useMutation({
    mutationFn: async (id: string) =>
      unwrap(await api.DELETE('/v1/session/sessions/{sessionId}', { params: { path: { sessionId: id } } })),
    onSuccess: () => {
      toast.success('Signed out on that browser.');
      void qc.invalidateQueries({ queryKey: userKeys.sessions() });
    },
    onError: (err) => toast.error(describeError(err)),
  });
  const columns: Column<SessionRow>[] = [
    {
      key: 'ua',
      header: 'Browser',
      cell: (s) => (
        <div className="row">
          <span title={s.userAgent ?? undefined}>{browserName(s.userAgent)}</span>
          {s.current && <StatusBadge status="active" label="This browser" />}
        </div>
      ),
    },
    { key: 'ip', header: 'Address', cell: (s) => s.ip ?? '—' },
    { key: 'seen', header: 'Last active', cell: (s) => <span className="nowrap">{relative(s.lastSeenAt)}</span> },
    {
      key: 'actions',
      header: 'Actions',
      hiddenHeader: true,
      cell: (s) =>
        s.current ? null : (
          <Button size="sm" onClick={() => end.mutate(s.id)}>
            Sign out
          </Button>
        ),
    },
  ];
  return (
    <section className="stack-sm" aria-labelledby="sess-h">
      <h2 id="sess-h">Your sessions</h2>
      <QueryState query={q}>
        {(d) =>
          d.data.length === 0 ? (
            <div className="card">
              <EmptyState title="No sessions">You are using an API key.</EmptyState>
            </div>
          ) : (
            <Table rows={d.data} columns={columns} rowKey={(r) => r.id} caption="Your sessions" />
          )
        }
      </QueryState>
    </section>
  );
}
