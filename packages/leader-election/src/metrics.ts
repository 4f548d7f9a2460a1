/**
 * One election's metric, as client-go's `LeaderMetric`. An adapter backs
 * `on`/`off` with the `leader_election_master_status{name}` gauge (1 while
 * leading, 0 otherwise) and `slowpathExercised` with
 * `leader_election_slowpath_total{name}`.
 */
export interface LeaderMetric {
  on(name: string): void;
  off(name: string): void;
  slowpathExercised(name: string): void;
}

/** Makes the metric of each elector (client-go's `MetricsProvider`). */
export interface LeaderMetricsProvider {
  newLeaderMetric(): LeaderMetric;
}

/** The default: records nothing. */
export const noopLeaderMetricsProvider: LeaderMetricsProvider = {
  newLeaderMetric: () => ({ on() {}, off() {}, slowpathExercised() {} }),
};
