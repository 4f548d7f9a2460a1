import { jobs } from "@reconcile/api";
import { defineKind } from "./definition.js";
import { jobPrinter } from "./printers/index.js";

export const jobDefinition = defineKind({ descriptor: jobs, printer: jobPrinter, protobufMessage: "Job" });
