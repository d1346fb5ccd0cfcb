import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import { workspaceKeys } from '../../api/keys';
import { PageHeader, QueryState } from '../../components';
import { SettingsForm } from './SettingsForm';

export default function Settings() {
  const q = useQuery({ queryKey: workspaceKeys.detail(), queryFn: async () => unwrap(await api.GET('/v1/workspace')) });
  return (
    <>
      <PageHeader title="Settings" description="The workspace's name and what every email and public page carries." />
      <QueryState query={q}>{(ws) => <SettingsForm ws={ws} />}</QueryState>
    </>
  );
}
