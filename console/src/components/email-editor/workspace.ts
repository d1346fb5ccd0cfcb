/** The workspace's brand colour and postal address, for the editor (GET /v1/workspace: the settings page's query). */
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import { workspaceKeys } from '../../api/keys';

export function useWorkspaceLook(): { brandColor: string | null; postalAddress: string | null } {
  const q = useQuery({
    queryKey: workspaceKeys.detail(),
    queryFn: async () => unwrap(await api.GET('/v1/workspace')),
    staleTime: 60_000,
  });
  const settings = q.data?.settings;
  return { brandColor: settings?.brandColor ?? null, postalAddress: settings?.postalAddress ?? null };
}
