import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { Group } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

export async function saveGroup({ group, create }: { group: Group; create: boolean }): Promise<Group> {
  if (create) return api<Group>('/v1/groups', { method: 'POST', body: group });
  return api<Group>(`/v1/groups/${encodeURIComponent(group.name)}`, { method: 'PUT', body: group, ifMatch: group.version });
}

export async function deleteGroup(group: Group): Promise<void> {
  await api<void>(`/v1/groups/${encodeURIComponent(group.name)}`, { method: 'DELETE', ifMatch: group.version });
}

export function useSaveGroup() {
  const qc = useQueryClient();
  return useMutation({ mutationFn: saveGroup, onSuccess: () => qc.invalidateQueries({ queryKey: ['groups'] }) });
}

export function useDeleteGroup() {
  const qc = useQueryClient();
  return useMutation({ mutationFn: deleteGroup, onSuccess: () => qc.invalidateQueries({ queryKey: ['groups'] }) });
}
