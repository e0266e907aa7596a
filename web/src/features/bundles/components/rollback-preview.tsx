import { Notice } from '../../../components/notice.tsx';
import { Loading } from '../../../components/page.tsx';
import { ImpactReportView } from '../../decisions/components/impact-view.tsx';
import { useDiff } from '../api/get-diff.ts';
import { useRollbackImpact } from '../api/get-rollback-impact.ts';
import { BundleDiffView } from './bundle-diff-view.tsx';

/** Before a rollback, as before a publish: what changes from the latest version, and its impact on logged traffic. */
export function RollbackPreview({ tenant, from, to }: { tenant: string; from: number | undefined; to: number }) {
  const diff = useDiff(tenant, from, to);
  const impact = useRollbackImpact(tenant, to);
  return (
    <div className="rollback-preview">
      <h3>
        Changes from v{from} back to v{to}
      </h3>
      {diff.isPending && from !== undefined ? <Loading what="diff" /> : null}
      {diff.error ? <Notice error={diff.error} /> : null}
      {diff.data ? <BundleDiffView diff={diff.data} label={`v${from} back to v${to}`} /> : null}
      <ImpactReportView tenant={tenant} report={impact.data}>
        {impact.isPending ? <Loading what="impact" /> : null}
        {impact.error ? <Notice error={impact.error} /> : null}
      </ImpactReportView>
    </div>
  );
}
