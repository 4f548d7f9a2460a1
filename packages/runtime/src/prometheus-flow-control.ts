import { Counter, Gauge, Histogram, type Registry } from "prom-client";

/** A priority level's seat limits and demand, as the API server's metrics seam reports them. */
export interface FlowControlLimits {
  readonly nominal: number;
  readonly lower: number;
  readonly upper: number;
  readonly current: number;
  readonly target: number;
  readonly demandHighWatermark: number;
  readonly demandAverage: number;
  readonly demandStdev: number;
  readonly demandSmoothed: number;
}

/** The API server metrics seam's API Priority and Fairness members. */
export interface FlowControlMetrics {
  flowControlDispatched(priorityLevel: string, flowSchema: string): void;
  flowControlRejected(priorityLevel: string, flowSchema: string, reason: string): void;
  flowControlSeats(priorityLevel: string, seats: number): void;
  flowControlLimits(priorityLevel: string, limits: FlowControlLimits): void;
  flowControlFairFrac(fairFrac: number): void;
  flowControlRequests(
    priorityLevel: string,
    flowSchema: string,
    executing: number,
    waiting: number,
    seats?: { executing: number; waiting: number },
  ): void;
  flowControlWait(priorityLevel: string, flowSchema: string, executed: boolean, seconds: number): void;
  flowControlExecution(priorityLevel: string, flowSchema: string, watch: boolean, seconds: number): void;
  flowControlQueueLength(priorityLevel: string, flowSchema: string, length: number): void;
}

/** API Priority and Fairness' metrics (k8s.io/apiserver's util/flowcontrol/metrics), as the seam reports them. */
export function flowControlMetrics(registers: Registry[]): FlowControlMetrics {
  const dispatched = new Counter({
    name: "apiserver_flowcontrol_dispatched_requests_total",
    help: "[BETA] Number of requests executed by API Priority and Fairness subsystem",
    labelNames: ["priority_level", "flow_schema"] as const,
    registers,
  });
  const rejected = new Counter({
    name: "apiserver_flowcontrol_rejected_requests_total",
    help: "[BETA] Number of requests rejected by API Priority and Fairness subsystem",
    labelNames: ["priority_level", "flow_schema", "reason"] as const,
    registers,
  });
  const executingRequests = new Gauge({
    name: "apiserver_flowcontrol_current_executing_requests",
    help: "[BETA] Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem",
    labelNames: ["priority_level", "flow_schema"] as const,
    registers,
  });
  const inqueueRequests = new Gauge({
    name: "apiserver_flowcontrol_current_inqueue_requests",
    help: "[BETA] Number of requests currently pending in queues of the API Priority and Fairness subsystem",
    labelNames: ["priority_level", "flow_schema"] as const,
    registers,
  });
  const durationBuckets = [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30];
  const waitDuration = new Histogram({
    name: "apiserver_flowcontrol_request_wait_duration_seconds",
    help: "[BETA] Length of time a request spent waiting in its queue",
    labelNames: ["priority_level", "flow_schema", "execute"] as const,
    buckets: durationBuckets,
    registers,
  });
  const executionDuration = new Histogram({
    name: "apiserver_flowcontrol_request_execution_seconds",
    help: "[ALPHA] Duration of initial stage (for a WATCH) or any (for a non-WATCH) stage of request execution in the API Priority and Fairness subsystem",
    labelNames: ["priority_level", "flow_schema", "type"] as const,
    buckets: durationBuckets,
    registers,
  });
  const queueLength = new Histogram({
    name: "apiserver_flowcontrol_request_queue_length_after_enqueue",
    help: "[ALPHA] Length of queue in the API Priority and Fairness subsystem, as seen by each request after it is enqueued",
    labelNames: ["priority_level", "flow_schema"] as const,
    buckets: [0, 10, 25, 50, 100, 250, 500, 1000],
    registers,
  });
  // The seats requests hold and wait for, as the work estimator gave them (one each, when not told).
  const executingSeats = new Gauge({
    name: "apiserver_flowcontrol_current_executing_seats",
    help: "[BETA] Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem",
    labelNames: ["priority_level", "flow_schema"] as const,
    registers,
  });
  const inqueueSeats = new Gauge({
    name: "apiserver_flowcontrol_current_inqueue_seats",
    help: "[ALPHA] Number of seats currently pending in queues of the API Priority and Fairness subsystem",
    labelNames: ["priority_level", "flow_schema"] as const,
    registers,
  });
  return {
    ...limitMetrics(registers),
    flowControlDispatched(priority_level, flow_schema) {
      dispatched.inc({ priority_level, flow_schema });
    },
    flowControlRejected(priority_level, flow_schema, reason) {
      rejected.inc({ priority_level, flow_schema, reason });
    },
    flowControlRequests(priority_level, flow_schema, executing, waiting, seats) {
      executingRequests.set({ priority_level, flow_schema }, executing);
      inqueueRequests.set({ priority_level, flow_schema }, waiting);
      executingSeats.set({ priority_level, flow_schema }, seats?.executing ?? executing);
      inqueueSeats.set({ priority_level, flow_schema }, seats?.waiting ?? waiting);
    },
    flowControlWait(priority_level, flow_schema, executed, seconds) {
      waitDuration.observe({ priority_level, flow_schema, execute: String(executed) }, seconds);
    },
    flowControlExecution(priority_level, flow_schema, watch, seconds) {
      executionDuration.observe({ priority_level, flow_schema, type: watch ? "watch" : "regular" }, seconds);
    },
    flowControlQueueLength(priority_level, flow_schema, length) {
      queueLength.observe({ priority_level, flow_schema }, length);
    },
  };
}

/**
 * Each priority level's seat limits and demand as the last adjustment left
 * them (one gauge per figure, by level), and the fair fraction.
 */
function limitMetrics(
  registers: Registry[],
): Pick<FlowControlMetrics, "flowControlSeats" | "flowControlLimits" | "flowControlFairFrac"> {
  const levelGauge = (name: string, help: string) =>
    new Gauge({ name, help, labelNames: ["priority_level"] as const, registers });
  const nominalSeats = levelGauge(
    "apiserver_flowcontrol_nominal_limit_seats",
    "[BETA] Nominal number of execution seats configured for each priority level",
  );
  const currentSeats = levelGauge(
    "apiserver_flowcontrol_current_limit_seats",
    "[ALPHA] current derived number of execution seats available to each priority level",
  );
  const lowerSeats = levelGauge(
    "apiserver_flowcontrol_lower_limit_seats",
    "[ALPHA] Configured lower bound on number of execution seats available to each priority level",
  );
  const upperSeats = levelGauge(
    "apiserver_flowcontrol_upper_limit_seats",
    "[ALPHA] Configured upper bound on number of execution seats available to each priority level",
  );
  const demandHighWatermark = levelGauge(
    "apiserver_flowcontrol_demand_seats_high_watermark",
    "[ALPHA] High watermark, over last adjustment period, of demand_seats",
  );
  const demandAverage = levelGauge(
    "apiserver_flowcontrol_demand_seats_average",
    "[ALPHA] Time-weighted average, over last adjustment period, of demand_seats",
  );
  const demandStdev = levelGauge(
    "apiserver_flowcontrol_demand_seats_stdev",
    "[ALPHA] Time-weighted standard deviation, over last adjustment period, of demand_seats",
  );
  const demandSmoothed = levelGauge(
    "apiserver_flowcontrol_demand_seats_smoothed",
    "[ALPHA] Smoothed seat demands",
  );
  const targetSeats = levelGauge("apiserver_flowcontrol_target_seats", "[ALPHA] Seat allocation targets");
  const fairFrac = new Gauge({
    name: "apiserver_flowcontrol_seat_fair_frac",
    help: "[ALPHA] Fair fraction of server's concurrency to allocate to each priority level that can use it",
    registers,
  });
  return {
    flowControlSeats(priority_level, seats) {
      nominalSeats.set({ priority_level }, seats);
      currentSeats.set({ priority_level }, seats);
    },
    flowControlLimits(priority_level, limits) {
      const labels = { priority_level };
      nominalSeats.set(labels, limits.nominal);
      lowerSeats.set(labels, limits.lower);
      upperSeats.set(labels, limits.upper);
      currentSeats.set(labels, limits.current);
      targetSeats.set(labels, limits.target);
      demandHighWatermark.set(labels, limits.demandHighWatermark);
      demandAverage.set(labels, limits.demandAverage);
      demandStdev.set(labels, limits.demandStdev);
      demandSmoothed.set(labels, limits.demandSmoothed);
    },
    flowControlFairFrac(frac) {
      fairFrac.set(frac);
    },
  };
}
