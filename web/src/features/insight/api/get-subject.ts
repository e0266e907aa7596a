import { queryOptions, useQuery } from '@tanstack/react-query';
import type { SubjectOverview } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

export type { SubjectOverview };

/** Per readable tenant: the subject's roles, what it sees on the draft, its recent decisions. */
export async function getSubject(subject: string): Promise<SubjectOverview> {
  return api<SubjectOverview>(`/v1/subjects/${encodeURIComponent(subject)}`);
}

export const subjectQueryOptions = (subject: string) =>
  queryOptions({ queryKey: ['tenants', 'subject', subject], queryFn: () => getSubject(subject), retry: false });

export function useSubject(subject: string) {
  return useQuery(subjectQueryOptions(subject));
}
