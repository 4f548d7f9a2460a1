import { jobs } from "@reconcile/api";
import { jobPrinter } from "../http/printers.js";
import { defineKind } from "./definition.js";

export const jobDefinition = defineKind({ descriptor: jobs, printer: jobPrinter, protobufMessage: "Job" });
