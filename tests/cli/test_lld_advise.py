"""`buffer advise --config` on a Low Latency DOCSIS file judges the aggregate's classic queue at the
aggregate's rate (hfcprov.model.lld): the queue a buffer size is about, even when only TLV 70 has a rate."""

from __future__ import annotations

import json
import subprocess
import sys

from hfcprov.config import encode, parse_text

ASF_RATE_ONLY = """Main { NetworkAccess 1;
  UpstreamAggregateServiceFlow { UpstreamServiceFlowReference 9; MaxRateSustained 20000000;
    LowLatencyAggregateSFEncodings { LowLatencyServiceFlowReference 2; } }
  UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; UpstreamAggregateServiceFlowReference 9;
                  BufferControl { TargetBuffer 131072; } AQMEncodings { SFAQMLatencyTarget 15; } }
  UsServiceFlow { UsServiceFlowRef 2; QosParamSetType 7; UpstreamAggregateServiceFlowReference 9; }
  DsServiceFlow { DsServiceFlowRef 3; QosParamSetType 7; MaxRateSustained 100000000; } }"""


def test_advise_judges_the_classic_queue_at_the_aggregates_rate(tmp_path):
    cm = tmp_path / "lld.cm"
    cm.write_bytes(encode(parse_text(ASF_RATE_ONLY)))
    p = subprocess.run([sys.executable, "-m", "hfcprov", "buffer", "advise", "--config", str(cm), "--rtt", "40ms",
                        "--json"], capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)["rows"]
    # not the downstream flow (25[0], the only flow with a rate of its own): the classic queue at TLV 70's rate
    assert (rows["flow"], rows["rate_mbps"], rows["aqm"], rows["queue_bytes"]) == \
        (["service flow 24[0] (ref 1)"], [20.0], ["docsis-pie 15 ms"], [131072])
