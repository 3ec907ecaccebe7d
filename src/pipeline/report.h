// The comparison report of a pipeline run: report.md and a self-contained report.html
// (inline SVG figures, no network) in the run folder.
#pragma once

#include "newscls/pipeline/pipeline.h"

namespace newscls {

void write_pipeline_report(const PipelineSummary& summary, const PipelineRequest& request);

}  // namespace newscls
