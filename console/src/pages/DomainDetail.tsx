import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { describeError } from '../lib/problems';
import { useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { api, unwrap } from '../api/client';
import { domainKeys } from '../api/keys';
import { useCan } from '../api/session';
import {
  Button,
  ConfirmDialog,
  CopyButton,
  EmptyState,
  ErrorState,
  PageHeader,
  Skeleton,
  StatusBadge,
  useToast,
} from '../components';
import { formatDateTime } from '../lib/format';
import { DmarcReports } from './Domains/DmarcReports';
import type { Domain } from './Domains/Domains';

type Verification = NonNullable<Domain['verification']>;
type CheckedRecord = Verification['records'][number];

const RESULT: Record<CheckedRecord['status'], string> = {
  VERIFIED: 'Found and correct',
  MISSING: 'Not found yet',
  MISMATCH: 'Found, but the value differs',
  TIMEOUT: 'DNS did not answer in time',
  ERROR: 'The lookup failed',
};

function purpose(r: { type: string; name: string; value: string }, trackingHost: string | null): string {
  if (r.type === 'CNAME')
    return r.name === trackingHost ? 'Tracking host (links and pixel)' : 'Return-Path of your relay';
  if (r.type === 'MX') return 'Bounces (mail back to Formcast)';
  if (r.name.includes('_domainkey')) return 'DKIM signature key';
  if (r.value.startsWith('v=spf1')) return 'SPF for the bounce domain';
  return 'Ownership';
}

export default function DomainDetail() {
  const { domainId = '' } = useParams();
  const can = useCan();
  const toast = useToast();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [removing, setRemoving] = useState(false);
  const q = useQuery({
    queryKey: domainKeys.detail(domainId),
    queryFn: async () => unwrap(await api.GET('/v1/domains/{domainId}', { params: { path: { domainId } } })),
  });
  const verify = useMutation({
    mutationFn: async () => unwrap(await api.POST('/v1/domains/{domainId}/verify', { params: { path: { domainId } } })),
    onSuccess: (d) => {
      qc.setQueryData(domainKeys.detail(domainId), d);
      void qc.invalidateQueries({ queryKey: domainKeys.lists() });
      if (d.status === 'VERIFIED') toast.success(`${d.name} is verified.`);
      else toast.error(`${d.name} is not verified yet: see the result of each record.`);
    },
    onError: (err) => toast.error(describeError(err)),
  });
  const remove = useMutation({
    mutationFn: async () => unwrap(await api.DELETE('/v1/domains/{domainId}', { params: { path: { domainId } } })),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: domainKeys.lists() });
      toast.success('Domain removed.');
      navigate('/domains');
    },
    onError: (err) => toast.error(describeError(err)),
  });

  if (q.isPending)
    return (
      <>
        <PageHeader title="Domain" back={{ to: '/domains', label: 'Domains' }} />
        <Skeleton lines={8} />
      </>
    );
  if (q.isError)
    return (
      <>
        <PageHeader title="Domain" back={{ to: '/domains', label: 'Domains' }} />
        <ErrorState error={q.error} onRetry={() => void q.refetch()} />
      </>
    );
  const d = q.data;
  const v = d.verification;
  // The deciding records, and the advisory ones checked beside them (the Return-Path's, the tracking CNAME).
  const checked = new Map(
    [...(v?.records ?? []), ...(v?.envelope?.records ?? []), ...(v?.tracking ? [v.tracking] : [])].map((r) => [
      `${r.type} ${r.name} ${r.value}`,
      r,
    ]),
  );
  const canWrite = can('write:domains');

  return (
    <>
      <PageHeader
        needs="write:domains"
        title={d.name}
        back={{ to: '/domains', label: 'Domains' }}
        description={
          <span className="row">
            <StatusBadge status={d.status} />
            {d.verifiedAt ? (
              <span>Verified {formatDateTime(d.verifiedAt)}</span>
            ) : (
              <span>Publish the records below, then verify.</span>
            )}
          </span>
        }
        actions={
          canWrite && (
            <>
              <Button variant="primary" onClick={() => verify.mutate()} loading={verify.isPending}>
                {d.status === 'VERIFIED' ? 'Check again' : 'Verify DNS records'}
              </Button>
              <Button variant="danger" onClick={() => setRemoving(true)}>
                Remove
              </Button>
            </>
          )
        }
      />
      <div className="stack">
        <section className="card stack-sm" aria-labelledby="records-h">
          <div className="card-header">
            <h2 id="records-h">DNS records</h2>
            <span className="muted small">{v ? `Last checked ${formatDateTime(v.checkedAt)}` : 'Not checked yet'}</span>
          </div>
          <p className="muted small">
            Add these at your DNS provider. Some providers want the name without the domain at the end (e.g.{' '}
            <code>{d.records[0]?.name.replace(`.${d.name}`, '') ?? '@'}</code>).
          </p>
          {d.records.length === 0 ? (
            <EmptyState title="No records" />
          ) : (
            <div className="table-wrap" tabIndex={0} role="region" aria-label={`DNS records to publish for ${d.name}`}>
              <table className="table">
                <caption className="visually-hidden">DNS records to publish for {d.name}</caption>
                <thead>
                  <tr>
                    <th scope="col">Type</th>
                    <th scope="col">Name</th>
                    <th scope="col">Value</th>
                    <th scope="col">Purpose</th>
                    <th scope="col">Result</th>
                  </tr>
                </thead>
                <tbody>
                  {d.records.map((r) => {
                    const c = checked.get(`${r.type} ${r.name} ${r.value}`);
                    return (
                      <tr key={`${r.type}-${r.name}-${r.value}`}>
                        <td>
                          {r.type}
                          {r.priority !== undefined ? <div className="muted small">priority {r.priority}</div> : null}
                        </td>
                        <td className="dns-name">
                          <div className="stack-sm">
                            <span className="cell-value">{r.name}</span>
                            <CopyButton text={r.name} what={`${r.type} record name`} />
                          </div>
                        </td>
                        <td>
                          <div className="stack-sm">
                            <span className="cell-value">{r.value}</span>
                            <CopyButton text={r.value} what={`${r.type} record value for ${r.name}`} />
                          </div>
                        </td>
                        <td className="small">{purpose(r, d.trackingHost)}</td>
                        <td>
                          {c ? (
                            <div className="stack-sm">
                              <StatusBadge status={c.status} label={RESULT[c.status]} />
                              {c.status === 'MISMATCH' && c.found.length > 0 && (
                                <div className="small muted">
                                  Found: <span className="cell-value">{c.found.join(', ')}</span>
                                </div>
                              )}
                            </div>
                          ) : (
                            <span className="muted small">Not checked</span>
                          )}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )}
        </section>
        {v && (
          <section className="card stack-sm" aria-labelledby="advice-h">
            <h2 id="advice-h">Deliverability checks</h2>
            <dl className="kv">
              {v.envelope && (
                <>
                  <dt>SPF at the Return-Path</dt>
                  <dd>
                    {v.envelope.domain === null
                      ? `Your relay's (${v.envelope.relay}): see the advice`
                      : v.envelope.spf.found
                        ? `${v.envelope.domain}: ${v.envelope.spf.record ?? 'through its CNAME'}`
                        : `No SPF record at ${v.envelope.domain}, where receivers check it`}
                  </dd>
                </>
              )}
              <dt>SPF on {d.name}</dt>
              <dd>
                {v.spf.found ? <span className="cell-value">{v.spf.record}</span> : 'No SPF record on the domain'}
              </dd>
              <dt>DMARC</dt>
              <dd>
                {v.dmarc.found ? <span className="cell-value">{v.dmarc.record}</span> : 'No DMARC record (_dmarc)'}
                {v.alignment && !v.alignment.spfAligns && (
                  <div className="small">aspf=s: SPF never aligns with a Return-Path on a subdomain</div>
                )}
              </dd>
              <dt>Bounce MX</dt>
              <dd>{v.bounce.mx.found ? v.bounce.mx.hosts.join(', ') : 'Not found'}</dd>
              <dt>Bounce SPF</dt>
              <dd>{v.bounce.spf.found ? <span className="cell-value">{v.bounce.spf.record}</span> : 'Not found'}</dd>
            </dl>
            {v.advice.length > 0 && (
              <div className="callout callout-warning">
                <strong>Advice</strong>
                <ul>
                  {v.advice.map((a) => (
                    <li key={a}>{a}</li>
                  ))}
                </ul>
              </div>
            )}
          </section>
        )}
        <DmarcReports domainId={d.id} domainName={d.name} />
      </div>
      <ConfirmDialog
        open={removing}
        title={`Remove ${d.name}?`}
        confirmLabel="Remove domain"
        danger
        busy={remove.isPending}
        onClose={() => setRemoving(false)}
        onConfirm={() => remove.mutate()}
      >
        <p>Broadcasts can no longer send from addresses at {d.name}. You can add it again later, with new records.</p>
      </ConfirmDialog>
    </>
  );
}
