import { Component, type ReactNode } from 'react';
import { Notice } from './notice.tsx';

/** Catches a route's render errors so the rest of the console keeps working; resets when `resetKey` changes. */
export class RouteErrorBoundary extends Component<{ resetKey: string; children: ReactNode }, { error: unknown; key: string }> {
  override state = { error: null as unknown, key: this.props.resetKey };

  static getDerivedStateFromError(error: unknown) {
    return { error };
  }

  static getDerivedStateFromProps(props: { resetKey: string }, state: { error: unknown; key: string }) {
    return props.resetKey !== state.key ? { error: null, key: props.resetKey } : null;
  }

  override render() {
    if (this.state.error)
      return (
        <section className="page">
          <h1>This page failed</h1>
          <Notice error={this.state.error} />
          <button type="button" onClick={() => this.setState({ error: null })}>
            Try again
          </button>
        </section>
      );
    return this.props.children;
  }
}
