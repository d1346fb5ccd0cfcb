/**
 * One automation: its name and trigger, its steps as a vertical flow (branches and splits side by side, steps
 * added anywhere, moved and removed), the selected step's form beside the flow, live problems per step before
 * saving and the API's own (a 422's `errors[].path`, such as `/steps/2/then/0/from`, shown on the step it names),
 * Save (PUT), Activate and Pause, per-step stats on each card, the runs, and the simulator: a dry run for a
 * contact or a made-up one that lights up the path taken, with each step's time and rendered subject.
 * Viewers see all of it read-only (the simulator too: it writes nothing).
 */
import { useQuery } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { automationKeys } from '../../api/keys';
import { PageHeader, QueryState } from '../../components';
import { automationsApi } from '../../lib/automations';
import { Editor } from './Editor';
import '../../styles/audience.css';
import '../../styles/automations.css';

export default function AutomationDetail() {
  const { automationId = '' } = useParams();
  const q = useQuery({
    queryKey: automationKeys.detail(automationId),
    queryFn: () => automationsApi.get(automationId),
  });
  if (q.data) return <Editor key={q.data.id} automation={q.data} />;
  return (
    <>
      <PageHeader title="Automation" back={{ to: '/automations', label: 'Automations' }} />
      <QueryState query={q} skeleton={10}>
        {() => null}
      </QueryState>
    </>
  );
}
