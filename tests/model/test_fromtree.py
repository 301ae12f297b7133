"""Reading the model from a config tree: TLV 24/25 with Buffer Control and AQM, TLV 68, DOCSIS 1.0 class of service, classifiers."""

from hfcprov.config import parse_text, read_config
from hfcprov.model import BufferControl, service_flows

from .. import support


def test_example_flows_in_file_order_with_buffers_in_bytes():
    flows = service_flows(read_config(support.REPO / "examples" / "buffer-control.cfg"))
    assert [(f.direction, f.ref) for f in flows] == [("upstream", 1), ("upstream", 2), ("downstream", 3)]
    first = flows[0]
    assert first.max_sustained_rate == 5_000_000.0
    assert first.max_traffic_burst == 30000
    assert first.max_concatenated_burst == 3044
    assert first.scheduling_type == 2
    assert first.buffer == BufferControl(minimum=3044, target=32768, maximum=65536)
    assert first.buffer_source == "24.35" and first.path == "24[0]"
    assert flows[1].target_buffer == 4096 and flows[1].path == "24[1]"
    assert flows[2].target_buffer == 262144 and flows[2].buffer_source == "25.35" and flows[2].path == "25[0]"


def test_aqm_peak_latency_and_names():
    tree = parse_text("""Main {
      UsServiceFlow { UsServiceFlowRef 1; MaxRateSustained 1000000; UpstreamPeakTrafficRate 2000000;
                      AQMEncodings { SFAQMDisable 1; } ServiceClassName "up"; }
      DsServiceFlow { DsServiceFlowRef 2; MaxDsLatency 20000; MinReservedRate 64000;
                      AQMEncodings { SFAQMDisable 0; } }
    }""")
    up, down = service_flows(tree)
    assert up.aqm_disabled is True and up.peak_rate == 2e6 and up.service_class_name == "up"
    assert down.aqm_disabled is False and down.max_latency == 0.02 and down.min_reserved_rate == 64000.0
    assert up.buffer == BufferControl() and up.buffer_source is None


def test_tlv68_default_upstream_target_buffer_applies_to_flows_without_buffer_control():
    tree = parse_text("""Main {
      DefaultUpstreamTargetBuffer 50;
      UsServiceFlow { UsServiceFlowRef 1; MaxRateSustained 8000000; }
      UsServiceFlow { UsServiceFlowRef 2; MaxRateSustained 8000000; BufferControl { TargetBuffer 1000; } }
      DsServiceFlow { DsServiceFlowRef 3; MaxRateSustained 8000000; }
    }""")
    a, b, c = service_flows(tree)
    assert (a.target_buffer, a.buffer_source) == (50_000, "68")  # 50 ms of 8 Mb/s
    assert (b.target_buffer, b.buffer_source) == (1000, "24.35")
    assert c.target_buffer is None


def test_docsis10_class_of_service():
    tree = parse_text("""Main { ClassOfService { ClassID 1; MaxRateDown 10000000; MaxRateUp 1000000;
                                                PriorityUp 2; GuaranteedUp 64000; MaxBurstUp 1600; } }""")
    up, down = service_flows(tree)
    assert (up.direction, up.ref, up.max_sustained_rate, up.traffic_priority, up.min_reserved_rate,
            up.max_traffic_burst, up.path) == ("upstream", 1, 1e6, 2, 64000.0, 1600, "4[0]")
    assert (down.direction, down.max_sustained_rate) == ("downstream", 1e7)


def test_classifiers_with_ip_criteria():
    from hfcprov.model import classifiers

    tree = parse_text("""Main {
      UsPacketClass { ClassifierRef 1; ServiceFlowRef 2; RulePriority 64; ActivationState 1;
        IpPacketClassifier { IpProto 17; IpDstAddr 10.0.0.0; IpDstMask 255.0.0.0; DstPortStart 5060; } }
      DsPacketClass { ClassifierRef 2; ServiceFlowRef 3; ActivationState 0; }
    }""")
    up, down = classifiers(tree)
    assert (up.direction, up.path, up.ref, up.sf_ref, up.priority, up.protocol) == ("upstream", "22[0]", 1, 2, 64, 17)
    assert up.dst == (0x0A000000, 0xFF000000) and up.dst_ports == (5060, 0xFFFF) and up.src is None
    assert (down.direction, down.active, down.protocol) == ("downstream", False, 256)


def test_every_name_the_model_reads_is_in_the_dictionary():
    """A renamed dictionary entry must fail here, not silently read None."""
    from hfcprov.model import aggregate_service_flows, classifiers, modem_settings

    tree = parse_text("""Main { UsServiceFlow { UsServiceFlowRef 1; BufferControl { TargetBuffer 1; }
                                                AQMEncodings { SFAQMDisable 0; } }
                               DsServiceFlow { DsServiceFlowRef 2; } ClassOfService { ClassID 1; }
                               UpstreamAggregateServiceFlow { LowLatencyAggregateSFEncodings { SchedulingWeight 1; } }
                               DownstreamAggregateServiceFlow { LowLatencyAggregateSFEncodings { SchedulingWeight 1; } }
                               UsPacketClass { IpPacketClassifier { IpProto 6; } }
                               DsPacketClass { IpPacketClassifier { IpProto 6; } } }""")
    assert len(service_flows(tree)) == 3 and len(aggregate_service_flows(tree)) == 2
    assert len(classifiers(tree)) == 2 and modem_settings(tree).low_latency_disable is None
