/** A survey's answers summed up per question. */
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import { formKeys } from '../../api/keys';
import { EmptyState, QueryState } from '../../components';
import { count, formatNumber } from '../../lib/format';

export function ResultsTab({ formId }: { formId: string }) {
  const q = useQuery({
    queryKey: formKeys.summary(formId),
    queryFn: async () =>
      unwrap(await api.GET('/v1/forms/{formId}/submissions/summary', { params: { path: { formId } } })),
  });
  return (
    <QueryState query={q}>
      {(s) =>
        s.total === 0 ? (
          <div className="card">
            <EmptyState title="No answers yet">
              Once people submit the form, each question’s answers are summed up here.
            </EmptyState>
          </div>
        ) : (
          <div className="stack">
            <p className="muted">{count(s.total, 'submission')}, every version of this form.</p>
            <div className="results-grid">
              {s.questions.map((question) => (
                <section
                  key={question.field}
                  className="card stack-sm result-card"
                  aria-labelledby={`result-${question.field}`}
                >
                  <h3 id={`result-${question.field}`}>{question.label}</h3>
                  <p className="muted small">
                    {formatNumber(question.answered)} of {formatNumber(s.total)} answered (
                    {Math.round((question.answered / s.total) * 100)}%)
                  </p>
                  {question.options && (
                    <ul className="result-bars">
                      {question.options.map((o) => {
                        const pct = question.answered ? Math.round((o.count / question.answered) * 100) : 0;
                        return (
                          <li key={o.value}>
                            <div className="result-label">
                              <span>{o.value}</span>
                              <span className="muted">
                                {formatNumber(o.count)} · {pct}%
                              </span>
                            </div>
                            <div className="result-track" aria-hidden="true">
                              <div className="result-fill" style={{ width: `${pct}%` }} />
                            </div>
                          </li>
                        );
                      })}
                      {(question.other ?? 0) > 0 && (
                        <li className="muted small">
                          {formatNumber(question.other)} gave an answer that is no longer an option
                        </li>
                      )}
                    </ul>
                  )}
                </section>
              ))}
            </div>
          </div>
        )
      }
    </QueryState>
  );
}
