/**
 * One broadcast. A DRAFT or SCHEDULED one opens in the composer: fields, pickers, HTML (CodeMirror) and text,
 * the live preview for a chosen contact, the preflight checks, test sends, scheduling in the user's time zone,
 * and the send behind a confirmation with the audience count. While SENDING or PAUSED: the live progress
 * (polled every 2 s) with pause, resume and cancel. Once SENT (or canceled, failed): the report.
 */
import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from 'react-router';
import { api, unwrap } from '../../api/client';
import { broadcastKeys } from '../../api/keys';
import { PageHeader, QueryState, StatusBadge } from '../../components';
import { formatDateTime } from '../../lib/format';
import { BroadcastActions } from '../Broadcasts/BroadcastActions';
import { Composer } from './Composer';
import { Progress } from './Progress';
import { Report } from './Report';
import { DeliveriesCard } from './DeliveriesCard';
import { AbResultsCard } from './AbResultsCard';
import '../../styles/audience.css';

const LIVE = new Set(['SENDING', 'PAUSED']);
const EDITABLE = new Set(['DRAFT', 'SCHEDULED']);

export default function BroadcastDetail() {
  const { broadcastId = '' } = useParams();
  const navigate = useNavigate();
  const q = useQuery({
    queryKey: broadcastKeys.detail(broadcastId),
    queryFn: async () => unwrap(await api.GET('/v1/broadcasts/{broadcastId}', { params: { path: { broadcastId } } })),
    refetchInterval: (query) =>
      query.state.data && LIVE.has(query.state.data.status)
        ? 2000
        : query.state.data?.status === 'SCHEDULED'
          ? 15_000
          : false,
  });
  const b = q.data;
  const description = b && (
    <span className="row">
      <StatusBadge status={b.status} />
      {b.sentAt && <span className="muted small">sent {formatDateTime(b.sentAt)}</span>}
      {b.status === 'SCHEDULED' && b.sendAt && <span className="muted small">for {formatDateTime(b.sendAt)}</span>}
      {!b.sentAt && b.status !== 'SCHEDULED' && (
        <span className="muted small">created {formatDateTime(b.createdAt)}</span>
      )}
      {b.resendOf && (
        <span className="muted small" data-testid="resend-of">
          a resend to the {b.resendOf.to === 'NON_OPENERS' ? 'non-openers' : 'non-clickers'} of{' '}
          <Link to={`/broadcasts/${b.resendOf.broadcastId}`}>the original</Link> (as of{' '}
          {formatDateTime(b.resendOf.asOf)})
        </span>
      )}
    </span>
  );
  return (
    <>
      <PageHeader
        needs="write:broadcasts"
        title={b?.name ?? 'Broadcast'}
        description={description}
        back={{ to: '/broadcasts', label: 'Broadcasts' }}
        actions={b && <BroadcastActions broadcast={b} onDeleted={() => navigate('/broadcasts')} />}
      />
      <QueryState query={q} skeleton={10}>
        {(broadcast) =>
          EDITABLE.has(broadcast.status) ? (
            <Composer key={broadcast.id} broadcast={broadcast} />
          ) : LIVE.has(broadcast.status) ? (
            <div className="stack">
              <Progress broadcast={broadcast} />
              {broadcast.abTest && <AbResultsCard broadcast={broadcast} />}
              <DeliveriesCard broadcastId={broadcast.id} live />
            </div>
          ) : (
            <Report broadcast={broadcast} />
          )
        }
      </QueryState>
    </>
  );
}
