"""The DOCSIS config-file TLV table: one row per TLV, DOCSIS 1.0 through 3.1/4.0 plus eRouter.

Imported once from the shared reference facts (1,548 entries) and maintained here; this
module is the project's single source for TLV names, value types, length rules and ranges.
``hfcprov.config.dictionary`` expands it into the lookup tree (1,542 paths).

One row per line: ``path|name|value type|length rule|value range|length range|spec section``
(kept as text: a 1,500-row Python literal costs a second to compile on every import).
Length rules: ``fixed:N``, ``var``, ``nul`` (NUL-terminated string), ``sub`` (sub-TLVs),
``alt:A,B`` (one of two lengths), ``n*K`` (a list of K-byte items), ``none`` (no length byte).

Shared subtrees are declared once in ``SUBTREES`` (paths relative to where they are mounted)
and mounted by a last field ``@name`` or ``@name:variant``: classifiers (22 us, 23 ds, 60
drop), service flows (24 us, 25 ds), aggregate service flows (70 us, 71 ds), vendor-specific
(43 and every .43), L2VPN (43.5).
Direction-specific overrides are in the row itself: ``us,ds:3|...`` applies only to those
variants (two rows for one code when the directions differ), a name ``Ref,ds=DsRef`` is named
``DsRef`` under the ``ds`` mount, ``+Other`` is another name the text form accepts.
ALIASES: other names the text form accepts for top-level paths (names used by other tools).

Fixed on import: 25.39 was listed a second time as 24.39; 94 carried 93's name
(UpstreamEHQoSASF, now DownstreamEHQoSASF); 74.4.2.1 pointed at itself as parent in the
original tool table (here parents follow from the path, so no TLV can be its own parent).
Fixed when the copies became one subtree (MULPI says the same for both directions):
EtherType (.10.3) takes 3 bytes and the IPv6 traffic class range and mask (.12.1) 3 bytes in
every classifier; VlanID 0..4096 and the full-range port/priority ranges everywhere; the
Extended CMTS MIC names (43.6) are those of the top-level 43 in every .43 (the others stay
accepted); 23.13 cites MULPI C.2.1.4.8; DscAction has the enum of DynamicServiceChangeAction; 71.38.3
cites C.2.2.9.13.3 (was .34).
"""

# fmt: off
ROWS = """\
0|/* Pad */|pad|none|||
1|DownstreamFrequency|uint32|fixed:4|88000000..1008000000||MULPIv3.0-I24 Annex C.1.1.1
2|UpstreamChannelId|uint8|fixed:1|0..255||MULPIv3.0-I24 Annex C.1.1.2
3|NetworkAccess|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.1.1.3
4|ClassOfService|aggregate|sub|||MULPIv3.0-I24 Annex C.1.1.4
4.1|ClassID|uint8|fixed:1|1..16||MULPIv3.0-I24 Annex C.1.1.4.1
4.2|MaxRateDown|uint32|fixed:4|0..1334880000||MULPIv3.0-I24 Annex C.1.1.4.2
4.3|MaxRateUp|uint32|fixed:4|0..183900000||MULPIv3.0-I24 Annex C.1.1.4.3
4.4|PriorityUp|uint8|fixed:1|0..7||MULPIv3.0-I24 Annex C.1.1.4.4
4.5|GuaranteedUp|uint32|fixed:4|0..183900000||MULPIv3.0-I24 Annex C.1.1.4.5
4.6|MaxBurstUp|uint16|fixed:2|0..65535||MULPIv3.0-I24 Annex C.1.1.4.6
4.7|PrivacyEnable|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.1.1.4.7
5|ModemCapabilities|aggregate|sub|||MULPIv3.0-I24 Annex C.1.3.1
5.1|ConcatenationSupport|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.1.3.1.1
5.2|ModemDocsisVersion|uint8|fixed:1|0..3||MULPIv3.0-I24 Annex C.1.3.1.2
5.3|FragmentationSupport|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.1.3.1.3
5.4|PHSSupport|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.1.3.1.4
5.5|IGMPSupport|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.1.3.1.5
5.6|BaselinePrivacySupport|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.1.3.1.6
5.7|DownstreamSAIDSupport|uint8|fixed:1|0..255||MULPIv3.0-I24 Annex C.1.3.1.7
5.8|UpstreamSIDSupport|uint8|fixed:1|0..255||MULPIv3.0-I24 Annex C.1.3.1.8
5.9|OptionalFilteringSupport|uint8|fixed:1|||MULPIv3.0-I24 Annex C.1.3.1.9
5.10|TransmitPreEqualizerTapsPerModulationInterval|uint8|fixed:1|1..4||MULPIv3.0-I24 Annex C.1.3.1.10
5.11|NumberofTransmitEqualizerTaps|uint8|fixed:1|8..64||MULPIv3.0-I24 Annex C.1.3.1.11
5.12|DCCSupport|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.1.3.1.12
5.13|IPFiltersSupport|uint16|fixed:2|64..65535||MULPIv3.0-I24 Annex C.1.3.1.13
5.14|LLCFiltersSupport|uint16|fixed:2|10..65535||MULPIv3.0-I24 Annex C.1.3.1.14
5.15|ExpandedUnicastSIDSpace|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.1.3.1.15
5.16|RangingHoldOffSupport|bytes|var||4..4|MULPIv3.0-I24 Annex C.1.3.1.16
5.17|L2VPNCapability|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.1.3.1.17
5.18|L2VPNeSAFEHostCapability|bytes|var|||MULPIv3.0-I24 Annex C.1.3.1.18
5.19|DUTFilteringSupport|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.1.3.1.19
5.20|UpstreamFrequencyRangeSupport|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.1.3.1.20
5.21|UpstreamSymbolRateSupport|uint8|fixed:1|||MULPIv3.0-I24 Annex C.1.3.1.21
5.22|SelectableActiveCodeMode2Support|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.1.3.1.22
5.23|CodeHoppingMode2Support|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.1.3.1.23
5.24|MultipleTransmitChannelSupport|uint8|fixed:1|||MULPIv3.0-I24 Annex C.1.3.1.24
5.25|M512MspsUpstreamTransmitChannel|uint8|fixed:1|||MULPIv3.0-I24 Aneex C.1.3.1.25
5.26|M256MspsUpstreamTransmitChannel|uint8|fixed:1|||MULPIv3.0-I24 Aneex C.1.3.1.26
5.27|TotalSIDClusterSupport|uint8|fixed:1|||MULPIv3.0-I24 Annex C.1.3.1.27
5.28|SIDClustersPerServiceFlow|uint8|fixed:1|2..8||MULPIv3.0-I24 Annex C.1.3.1.28
5.29|MultipleReceiveChannelSupport|uint8|fixed:1|||MULPIv3.0-I24 Annex C.1.3.1.29
5.30|TotalDownstreamServiceIDSupport|uint8|fixed:1|32..255||MULPIv3.0-I24 Annex C.1.3.1.30
5.31|ResequencingDownstreamServiceID|uint8|fixed:1|16..255||MULPIv3.0-I24 Annex C.1.3.1.31
5.32|MulticastDownstreamServiceID|uint8|fixed:1|16..255||MULPIv3.0-I24 Annex C.1.3.1.32
5.33|MulticastDSIDForwarding|uint8|fixed:1|0..2||MULPIv3.0-I24 Annex C.1.3.1.33
5.34|FrameControlTypeForwarding|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.1.3.1.34
5.35|DPVCapability|uint8|fixed:1|||MULPIv3.0-I24 Annex C.1.3.1.35
5.36|UnsolicitedGrantServiceSupport|uint8|fixed:1|||MULPIv3.0-I24 Annex C.1.3.1.36
5.37|MAPandUCDReceiptSupport|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.1.3.1.37
5.38|UpstreamDropClassifierSupport|uint16|fixed:2|64..65535||MULPIv3.0-I24 Annex C.1.3.1.38
5.39|IPv6Support|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.1.3.1.39
5.40|ExtendedUpstreamTransmitPower|uint8|fixed:1|0..244||MULPIv3.0-I24 Annex C.1.3.1.40
5.41|MPLSClassificationSupport|bytes|var||4..4|MULPIv3.0-I24 Annex C.1.3.1.41
5.42|DONUCapabilitiesEncoding|bytes|var|||MULPIv3.0-I24 Annex C.1.3.1.42
5.44|EnergyManagementCapabilities|bytes|var||4..4|MULPIv3.0-I24 Annex C.1.3.1.43
5.45|CDOCSISCapabilityEncoding|bytes|var|||MULPIv3.0-I24 Annex C.1.3.1.44
5.46|CMSTATUSACK|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.1.3.1.45
6|CmMic|md5_digest|fixed:16|||MULPIv3.0-I24 Annex C.1.1.5
7|CmtsMic|md5_digest|fixed:16|||MULPIv3.0-I24 Annex C.1.1.6
9|SwUpgradeFilename|string|var|||MULPIv3.0-I24 Annex C.1.2.3
10|SnmpWriteControl|ber_oid+uint8|var|||MULPIv3.0-I24 Annex C.1.2.4
11|SnmpMibObject|snmp_varbind_ber|var|||MULPIv3.0-I24 Annex C.1.2.5
12|ModemIPAddress|ipv4|fixed:4|||MULPIv3.0-I24 Annex C.1.3.3
14|CpeMacAddress|mac|fixed:6|||MULPIv3.0-I24 Annex C.1.2.6
17|BaselinePrivacy|aggregate|sub|||SECv3.0-I15 Annex A.1.1.1
17.1|AuthTimeout|uint32|fixed:4|1..30||SECv3.0-I15 Annex A.1.1.1.1
17.2|ReAuthTimeout|uint32|fixed:4|1..30||SECv3.0-I15 Annex A.1.1.1.2
17.3|AuthGraceTime|uint32|fixed:4|1..6047999||SECv3.0-I15 Annex A.1.1.1.3
17.4|OperTimeout|uint32|fixed:4|1..10||SECv3.0-I15 Annex A.1.1.1.4
17.5|ReKeyTimeout|uint32|fixed:4|1..10||SECv3.0-I15 Annex A.1.1.1.5
17.6|TEKGraceTime|uint32|fixed:4|1..302399||SECv3.0-I15 Annex A.1.1.1.6
17.7|AuthRejectTimeout|uint32|fixed:4|1..600||SECv3.0-I15 Annex A.1.1.1.7
17.8|SAMapWaitTimeout|uint32|fixed:4|1..10||SECv3.0-I15 Annex A.1.1.1.8
17.9|SAMapMaxRetries|uint32|fixed:4|0..10||SECv3.0-I15 Annex A.1.1.1.9
18|MaxCPE|uint8|fixed:1|1..254||MULPIv3.0-I24 Annex C.1.1.7
19|TftpTimestamp|uint32|fixed:4|0..4294967295||MULPIv3.0-I24 Annex C.1.1.8
20|TftpModemAddress|ipv4|fixed:4|||MULPIv3.0-I24 Annex C.1.1.9
21|SwUpgradeServer|ipv4|fixed:4|||MULPIv3.0-I24 Annex C.1.2.7
22|UsPacketClass|aggregate|sub|||MULPIv3.0-I24 Annex C.2.1.1|@classifier:us
23|DsPacketClass|aggregate|sub|||MULPIv3.0-I24 Annex C.2.1.3|@classifier:ds
24|UsServiceFlow|aggregate|sub|||MULPIv3.0-I24 Annex C.2.2.5|@service_flow:us
25|DsServiceFlow|aggregate|sub|||MULPIv3.0-I24 Annex C.2.2.5|@service_flow:ds
26|PHS|aggregate|sub|||MULPIv3.0-I24 Annex C.2.3
26.1|PHSClassifierRef|uint8|fixed:1|1..255||MULPIv3.0-I24 Annex C.2.3.1.1
26.2|PHSClassifierId|uint16|fixed:2|1..65535||MULPIv3.0-I24 Annex C.2.3.1.2
26.3|PHSServiceFlowRef|uint16|fixed:2|1..65535||MULPIv3.0-I24 Annex C.2.3.1.3
26.4|PHSServiceFlowId|uint32|fixed:4|1..4294967295||MULPIv3.0-I24 Annex C.2.3.1.4
26.5|PHSDSCAction|uint8|fixed:1|0..3||MULPIv3.0-I24 Annex C.2.3.1.5
26.7|PHSField|bytes|var||1..255|MULPIv3.0-I24 Annex C.2.4.2.1
26.8|PHSIndex|uint8|fixed:1|1..255||MULPIv3.0-I24 Annex C.2.4.2.2
26.9|PHSMask|bytes|var||1..255|MULPIv3.0-I24 Annex C.2.4.2.3
26.10|PHSSize|uint8|fixed:1|1..255||MULPIv3.0-I24 Annex C.2.4.2.4
26.11|PHSVerify|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.2.4.2.5
26.13|PHSDBCAction|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.2.3.1.6
26.43|VendorSpecific|aggregate|sub|||MULPIv3.0-I24 Annex C.2.1.11|@vendor_specific
28|MaxClassifiers|uint16|fixed:2|||MULPIv3.0-I24 Annex C.1.1.16
29|GlobalPrivacyEnable|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.1.1.17
32|MfgCVCData|bytes|var||0..255|MULPIv3.0-I24 Annex C.1.2.10
33|CoSignerCVCData|bytes|var||0..255|MULPIv3.0-I24 Annex C.1.2.11
34|SnmpV3Kickstart|aggregate|sub|||MULPIv3.0-I24 Annex C.1.2.9
34.1|SnmpV3SecurityName|string|var||1..16|MULPIv3.0-I24 Annex C.1.2.9.1
34.2|SnmpV3MgrPublicNumber|bytes|var||1..514|MULPIv3.0-I24 Annex C.1.2.9.2
35|SubMgmtControl|bytes|var||3..3|MULPIv3.0-I24 Annex C.1.1.19.1
36|SubscriberManagementCPEIPTable|ipv4_list|n*4|||MULPIv3.0-I24 Annex C.1.1.19.2
37|SubMgmtFilters|uint16_list|n*2|4..10||MULPIv3.0-I24 Annex C.1.1.19.4
38|SnmpV3TrapReceiver|aggregate|sub|||MULPIv3.0-I24 Annex C.1.2.12
38.1|SnmpV3TrapRxIP|ipv4|fixed:4|||MULPIv3.0-I24 Annex C.1.2.12.1
38.2|SnmpV3TrapRxPort|uint16|fixed:2|||MULPIv3.0-I24 Annex C.1.2.12.2
38.3|SnmpV3TrapRxType|uint16|fixed:2|1..5||MULPIv3.0-I24 Annex C.1.2.12.3
38.4|SnmpV3TrapRxTimeout|uint16|fixed:2|0..65535||MULPIv3.0-I24 Annex C.1.2.12.4
38.5|SnmpV3TrapRxRetries|uint16|fixed:2|0..65535||MULPIv3.0-I24 Annex C.1.2.12.5
38.6|SnmpV3TrapRxFilterOID|ber_oid|var||1..5|MULPIv3.0-I24 Annex C.1.2.12.6
38.7|SnmpV3TrapRxSecurityName|string|var||1..16|MULPIv3.0-I24 Annex C.1.2.12.7
38.8|SnmpV3TrapRxIP6|ipv6|fixed:16|||MULPIv3.0-I24 Annex C.1.2.12.8
39|DocsisTwoEnable|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.1.1.20
40|EnableTestModes|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.1.1.21
41|DsChannelList|aggregate|sub|||MULPIv3.0-I24 Annex C.1.1.22
41.1|SingleDsChannel|aggregate|sub|||MULPIv3.0-I24 Annex C.1.1.22.1
41.1.1|SingleDsTimeout|uint16|fixed:2|0..65535||MULPIv3.0-I24 Annex C.1.1.22.1.1
41.1.2|SingleDsFrequency|uint32|fixed:4|0..4294967295||MULPIv3.0-I24 Annex C.1.1.22.1.2
41.2|DsFreqRange|aggregate|sub|||MULPIv3.0-I24 Annex C.1.1.22.2
41.2.1|DsFreqRangeTimeout|uint16|fixed:2|0..65535||MULPIv3.0-I24 Annex C.1.1.22.2.1
41.2.2|DsFreqRangeStart|uint32|fixed:4|0..4294967295||MULPIv3.0-I24 Annex C.1.1.22.2.2
41.2.3|DsFreqRangeEnd|uint32|fixed:4|0..4294967295||MULPIv3.0-I24 Annex C.1.1.22.2.3
41.2.4|DsFreqRangeStepSize|uint32|fixed:4|0..4294967295||MULPIv3.0-I24 Annex C.1.1.22.2.4
41.3|DefaultScanTimeout|uint16|fixed:2|0..65535||MULPIv3.0-I24 Annex C.1.1.22.3
42|MulticastMACAddress|mac|fixed:6|||MULPIv3.0-I24 Annex C.1.1.23
43|VendorSpecific|aggregate|sub|||MULPIv3.0-I24 Annex C.2.1.11|@vendor_specific
45|DUTFiltering|aggregate|sub|||MULPIv3.0-I24 Annex C.1.1.24
45.1|DUTControl|uint8|fixed:1|0..1||L2VPN-I13 Annex B.2.1
45.2|DUTCMIM|bytes|var|||L2VPN-I13 Annex B.2.2
53|SNMPv1v2cCoexistenceConfig|aggregate|sub|||MULPIv3.0-I24 Annex C.1.2.13
53.1|SNMPv1v2cCommunityName|string|var|||MULPIv3.0-I24 Annex C.1.2.13.1
53.2|SNMPv1v2cTransportAddressAccess|aggregate|sub|||MULPIv3.0-I24 Annex C.1.2.13.2
53.2.1|SNMPv1v2cTransportAddress|ipv4_or_ipv6+port_u16|alt:6,18|||MULPIv3.0-I24 Annex C.1.2.13.2.1
53.2.2|SNMPv1v2cTransportAddressMask|ipv4_or_ipv6+port_u16|alt:6,18|||MULPIv3.0-I24 Annex C.1.2.13.2.2
53.3|SNMPv1v2cAccessViewType|uint8|fixed:1|1..2||MULPIv3.0-I24 Annex C.1.2.13.3
53.4|SNMPv1v2cAccessViewName|string|var|||MULPIv3.0-I24 Annex C.1.2.13.4
54|SNMPv3AccessViewConfiguration|aggregate|sub|||MULPIv3.0-I24 Annex C.1.2.14
54.1|SNMPv3AccessViewName|string|var|||MULPIv3.0-I24 Annex C.1.2.14.1
54.2|SNMPv3AccessViewSubtree|ber_oid|var|||MULPIv3.0-I24 Annex C.1.2.14.2
54.3|SNMPv3AccessViewMask|bytes|var||1..2|MULPIv3.0-I24 Annex C.1.2.14.3
54.4|SNMPv3AccessViewType|uint8|fixed:1|1..2||MULPIv3.0-I24 Annex C.1.2.14.4
55|SNMPCPEAccessControl|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.1.2.15
56|ChannelAssignmentConfig|aggregate|sub|||MULPIv3.0-I24 Annex C.1.1.25
56.1|CaTransmit|uint8|fixed:1|0..255||MULPIv3.0-I24 Annex C.1.1.25.1
56.2|CaReceive|uint32|fixed:4|88000000..860000000||MULPIv3.0-I24 Annex C.1.1.25.2
58|SwUpgradeServer6|ipv6|fixed:16|||MULPIv3.0-I24 Annex C.1.2.8
59|TFTPProvisionedModemIPv6Address|ipv6|fixed:16|||MULPIv3.0-I24 Annex C.1.1.10
60|UpstreamDropPacketClassification|aggregate|sub|||MULPIv3.0-I24 Annex C.2.1.2|@classifier:drop
61|SubMgmtCPEIPv6PrefixList|ipv6_prefix_list|n*17|||MULPIv3.0-I24 Annex C.1.1.19.3
62|UpstreamDropClassifierGroupID|uint8_list|n*1|||MULPIv3.0-I24 Annex C.1.1.26
63|SubMgmtControl6|uint16|fixed:2|||MULPIv3.0-I24 Annex C.1.1.19.5
64|CMTSStaticMulticastSessionEncodings|aggregate|sub|||MULPIv3.0-I24 Annex C.1.1.27
64.1|CMTSStaticMulticastSessionGroup|ipv4_or_ipv6|alt:4,16|||MULPIv3.0-I24 Annex C.1.1.27.1
64.2|CMTSStaticMulticastSessionSource|ipv4_or_ipv6|alt:4,16|||MULPIv3.0-I24 Annex C.1.1.27.2
64.3|CMTSStaticMulticastSessionCMIM|bytes|var|||MULPIv3.0-I24 Annex C.1.1.27.3
65|L2VPNMACAgingEncoding|aggregate|sub|||L2VPN-I13 Annex B.7
65.1|L2VPNMACAgingMode|uint8|fixed:1|0..1||L2VPN-I13 Annex B.7.1
66|ManagementEventControl|uint32|fixed:4|||MULPIv3.0-I24 Annex C.1.2.16
67|SubscriberManagementCPEIPv6Table|ipv6_list|n*16|||MULPIv3.0-I24 Annex C.1.1.19.6
68|DefaultUpstreamTargetBuffer|uint16|fixed:2|||MULPIv3.0-I24 Annex C.1.2.17
69|MACAddressLearningControlEncoding|aggregate|sub|||MULPIv3.0-I24 Annex C.1.2.18
69.1|MACAddressLearningControl|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.1.2.18.1
69.2|MACAddressLearningHoldoffTimer|uint8|fixed:1|0..10||MULPIv3.0-I24 Annex C.1.2.18.2
70|UpstreamAggregateServiceFlow|aggregate|sub|||MULPIv3.0-I24 Annex C.2.2.3|@aggregate_service_flow:us
71|DownstreamAggregateServiceFlow|aggregate|sub|||MULPIv3.0-I24 Annex C.2.2.3|@aggregate_service_flow:ds
72|MetroEthernetServiceProfile|aggregate|sub|||MULPIv3.0-I24 Annex C.2.2.10
72.1|MESPReference|uint8|fixed:1|1..255||MULPIv3.0-I24 Annex C.2.2.10.1
72.2|MESPBandwidthProfile|aggregate|sub|||MULPIv3.0-I24 Annex C.2.2.10.2
72.2.1|CIR|uint32|fixed:4|||MULPIv3.0-I24 Annex C.2.2.10.2.1
72.2.2|CBR|uint32|fixed:4|||MULPIv3.0-I24 Annex C.2.2.10.2.2
72.2.3|EIR|uint32|fixed:4|||MULPIv3.0-I24 Annex C.2.2.10.2.3
72.2.4|EBS|uint32|fixed:4|||MULPIv3.0-I24 Annex C.2.2.10.2.4
72.2.5|CouplingFlag|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.2.2.10.2.5
72.2.6|ColorMode|aggregate|sub|||MULPIv3.0-I24 Annex C.2.2.10.2.6
72.2.6.1|ColorIdentificationField|uint8|fixed:1|0..9||MULPIv3.0-I24 Annex C.2.2.10.2.6.1
72.2.6.2|ColorIdentificationFieldValue|bytes|var||1..1|MULPIv3.0-I24 Annex C.2.2.10.2.6.2
72.2.7|ColorMarking|aggregate|sub|||MULPIv3.0-I24 Annex C.2.2.10.2.7
72.2.7.1|ColorMarkingField|uint8|fixed:1|0..5||MULPIv3.0-I24 Annex C.2.2.10.2.7.1
72.2.7.2|ColorMarkingFieldValue|bytes|var||1..1|MULPIv3.0-I24 Annex C.2.2.10.2.7.2
72.3|MESPName|string_nul|nul||2..254|MULPIv3.0-I24 Annex C.2.2.10.3
73|NetworkTimingProfile|aggregate|sub|||MULPIv3.0-I24 Annex C.1.2.19
73.1|NetworkTimingProfileReference|uint16|fixed:2|1..65536||MULPIv3.0-I24 Annex C.1.2.19.1
73.2|NetworkTimingProfileName|string_nul|nul||2..16|MULPIv3.0-I24 Annex C.1.2.19.2
74|EnergyManagementParameter|aggregate|sub|||MULPIv3.0-I24 Annex C.1.1.30
74.1|EnergyManagementFeatureControl|uint32|fixed:4|0..1||MULPIv3.0-I24 Annex C.1.1.30.1
74.2|EnergyManagement1x1Mode|aggregate|sub|||MULPIv3.0-I24 Annex C.1.1.30.2
74.2.1|DownstreamActivityDetectionParameters|aggregate|sub|||MULPIv3.0-I24 Annex C.1.1.30.2.1
74.2.1.1|DownstreamEntryBitrateThreshold|uint32|fixed:4|||MULPIv3.0-I24 Annex C.1.1.30.2.1.1
74.2.1.2|DownstreamEntryTimeThreshold|uint16|fixed:2|1..65535||MULPIv3.0-I24 Annex C.1.1.30.2.1.2
74.2.1.3|DownstreamExitBitrateThreshold|uint32|fixed:4|||MULPIv3.0-I24 Annex C.1.1.30.2.1.3
74.2.1.4|DownstreamExitTimeThreshold|uint16|fixed:2|1..65535||MULPIv3.0-I24 Annex C.1.1.30.2.1.4
74.2.2|UpstreamActivityDetectionParameters|aggregate|sub|||MULPIv3.0-I24 Annex C.1.1.30.2.2
74.2.2.1|UpstreamEntryBitrateThreshold|uint32|fixed:4|||MULPIv3.0-I24 Annex C.1.1.30.2.2.1
74.2.2.2|UpstreamEntryTimeThreshold|uint16|fixed:2|1..65535||MULPIv3.0-I24 Annex C.1.1.30.2.2.2
74.2.2.3|UpstreamExitBitrateThreshold|uint32|fixed:4|||MULPIv3.0-I24 Annex C.1.1.30.2.2.3
74.2.2.4|UpstreamExitTimeThreshold|uint16|fixed:2|1..65535||MULPIv3.0-I24 Annex C.1.1.30.2.2.4
74.3|EnergyManagementCyclePeriod|uint16|fixed:2|||3 MULPIv3.0-I24 Annex C.1.1.30.3
74.4|EnergyManagementDLSMode|aggregate|sub|||MULPIv4.0-I07 Annex C.1.1.30.3
74.4.1|DownstreamActivityDetectionParameters|aggregate|sub|||MULPIv4.0-I07 Annex C.1.1.30.4.1
74.4.1.1|DownstreamEntryBitrateThreshold|uint32|fixed:4|||MULPIv4.0-I07 Annex C.1.1.30.4.1.1
74.4.1.2|DownstreamEntryTimeThreshold|uint16|fixed:2|1..65535||MULPIv4.0-I07 Annex C.1.1.30.4.1.2
74.4.1.3|DownstreamExitBitrateThreshold|uint32|fixed:4|||MULPIv4.0-I07 Annex C.1.1.30.4.1.3
74.4.1.4|DownstreamExitTimeThreshold|uint16|fixed:2|1..65535||MULPIv4.0-I07 Annex C.1.1.30.4.1.4
74.4.2|UpstreamActivityDetectionParameters|aggregate|sub|||MULPIv4.0-I07 Annex C.1.1.30.4.2
74.4.2.1|UpstreamEntryBitrateThreshold|uint32|fixed:4|||MULPIv4.0-I07 Annex C.1.1.30.4.2.1
74.4.2.2|UpstreamEntryTimeThreshold|uint16|fixed:2|1..65535||MULPIv4.0-I07 Annex C.1.1.30.4.2.2
74.4.2.3|UpstreamExitBitrateThreshold|uint32|fixed:4|||MULPIv4.0-I07 Annex C.1.1.30.4.2.3
74.4.2.4|UpstreamExitTimeThreshold|uint16|fixed:2|1..65535||MULPIv4.0-I07 Annex C.1.1.30.4.2.4
75|EnergyManagement1x1ModeIndicator|uint8|fixed:1|0..2||MULPIv3.0-I24 Annex C.1.4.4
76|CMUpstreamAQMDisable|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.1.2.20
79|UNIControlEncodings|aggregate|sub|||MULPIv3.0-I25 Annex C.3.3
79.1|ContextCMIM|bytes|var|||MULPIv3.0-I25 Annex C.3.3.1
79.2|UNIAdminStatus|uint8|fixed:1|0..1||MULPIv3.0-I25 Annex C.3.3.2
79.3|UNIAutoNegotiationStatus|uint8|fixed:1|0..1||MULPIv3.0-I25 Annex C.3.3.3
79.4|UNIOperatingSpeed|uint8|fixed:1|0..6||MULPIv3.0-I25 Annex C.3.3.4
79.5|UNIDuplex|uint8|fixed:1|0..2||MULPIv3.0-I25 Annex C.3.3.5
79.6|EEEStatus|uint8|fixed:1|0..1||MULPIv3.0-I25 Annex C.3.3.6
79.7|MaximumFrameSize|uint16|fixed:2|||MULPIv3.0-I25 Annex C.3.3.7
79.8|PowerOverEthernetStatus|uint8|fixed:1|0..1||MULPIv3.0-I25 Annex C.3.3.8
79.9|MediaType|uint8|fixed:1|0..1||MULPIv3.0-I25 Annex C.3.3.9
81|ManufacturerCVCChain|bytes|var||0..255|MULPIv3.1-I07 Annex C.1.2.21
82|CoSignerCVCChain|bytes|var||0..255|MULPIv3.1-I07 Annex C.1.2.22
83|DTPModeConfiguration|uint8|fixed:1|0..2||MULPIv3.1-I25 Annex C.1.1.31
84|DiplexerBandEdge|aggregate|sub|||MULPIv3.1-I19 Annex C.1.2.23
84.1|DiplexerUpstreamUpperBandEdge|uint8|fixed:1|0..4||LPIv3.1-I19 Annex C.1.2.23.1
84.2|DiplexerDownstreamLowerBandEdge|uint8|fixed:1|0..1||LPIv3.1-I19 Annex C.1.2.23.2
84.3|DiplexerDownstreamUpperBandEdge|uint8|fixed:1|0..2||LPIv3.1-I19 Annex C.1.2.23.3
88|QoSFrameworkforDOCSISEncodings|aggregate|sub|||MULPIv3.1-I25 Annex C.1.7
91|LowLatencyDisable|uint8|fixed:1|0..2||MULPIv3.1-I25 Annex C.1.1.32
92|DistributedHQoSEnable|uint8|fixed:1|0..2||MULPIv3.1-I25 Annex C.1.1.33
93|UpstreamEHQoSASF|aggregate|sub|||MULPIv3.1-I25 Annex C.2.2.5
93.1|ServiceFlowReference|uint16|fixed:2|1..65535||MULPIv3.1-I25 Annex C.2.2.7.1
93.7|TrafficPriority|uint8|fixed:1|0..7||MULPIv3.1-I25 Annex C.2.2.9.1
93.8|MaxSustainedRate|uint32|fixed:4|||MULPIv3.1-I25 Annex C.2.2.9.2.1
93.9|MaxTrafficBurst|uint32|fixed:4|||MULPIv3.1-I25 Annex C.2.2.9.3
93.10|MinReservedRate|uint32|fixed:4|||MULPIv3.1-I25 Annex C.2.2.9.4
93.11|MinResPacketSize|uint16|fixed:2|0..65535||MULPIv3.1-I25 Annex C.2.2.9.5
93.47|EnhancedHQoSIntraASFSchedulingEncoding|aggregate|sub|||MULPIv3.1-I25 Annex C.2.2.9.18
93.47.1|ConstituentSFReference|uint16|fixed:2|1..65535||MULPIv3.1-I25 Annex C.2.2.9.18.1
93.47.3|ConstituentSFSCN|string_nul|nul||2..16|MULPIv3.1-I25 Annex C.2.2.9.18.3
93.47.4|ConstituentSFPriority|uint8|fixed:1|0..7||MULPIv3.1-I25 Annex C.2.2.9.18.4
93.47.5|ConstituentSFWeight|uint8|fixed:1|||MULPIv3.1-I25 Annex C.2.2.9.18.5
94|DownstreamEHQoSASF|aggregate|sub|||MULPIv3.1-I25 Annex C.2.2.6
94.1|ServiceFlowReference|uint16|fixed:2|1..65535||MULPIv3.1-I25 Annex C.2.2.7.1
94.7|TrafficPriority|uint8|fixed:1|0..7||MULPIv3.1-I25 Annex C.2.2.9.1
94.8|MaxSustainedRate|uint32|fixed:4|||MULPIv3.1-I25 Annex C.2.2.9.2.2
94.9|MaxTrafficBurst|uint32|fixed:4|||MULPIv3.1-I25 Annex C.2.2.9.3
94.10|MinReservedRate|uint32|fixed:4|||MULPIv3.1-I25 Annex C.2.2.9.4
94.11|MinResPacketSize|uint16|fixed:2|0..65535||MULPIv3.1-I25 Annex C.2.2.9.5
94.47|EnhancedHQoSIntraASFSchedulingEncoding|aggregate|sub|||MULPIv3.1-I25 Annex C.2.2.9.18
94.47.1|ConstituentSFReference|uint16|fixed:2|1..65535||MULPIv3.1-I25 Annex C.2.2.9.18.1
94.47.3|ConstituentSFSCN|string_nul|nul||2..16|MULPIv3.1-I25 Annex C.2.2.9.18.3
94.47.4|ConstituentSFPriority|uint8|fixed:1|0..7||MULPIv3.1-I25 Annex C.2.2.9.18.4
94.47.5|ConstituentSFWeight|uint8|fixed:1|||MULPIv3.1-I25 Annex C.2.2.9.18.5
96|AdvancedDiplexerBandEdge|aggregate|sub|||MULPIv4.0-I07 Annex C.1.2.24
96.1|AdvDiplexerUpstreamUpperBandEdge|uint16|fixed:2|||MULPIv4.0-I07 Annex C.1.2.24.1
96.2|AdvDiplexerDownstreamLowerBandEdge|uint16|fixed:2|||MULPIv4.0-I07 Annex C.1.2.24.2
96.3|AdvDiplexerDownstreamUpperBandEdge|uint16|fixed:2|||MULPIv4.0-I07 Annex C.1.2.24.3
97|AdvancedBandPlanSupport|uint8|fixed:1|0..1||MULPIv4.0-I07 Annex C.1.2.25
101|DOCSISSyncConfigurations|aggregate|sub|||SYNC-I03 Annex D.2.1
101.1|PTPMasterClockEnable|uint8|fixed:1|1..2||SYNC-I03 Annex D.2.1.1
101.2|PTPProfileConfiguration|uint8|fixed:1|0..3||SYNC-I03 Annex D.2.1.2
101.3|PTPMaxNumberofClockSlavesConfiguration|uint8|fixed:1|0..255||SYNC-I03 Annex D.2.1.3
101.4|SyncEClockEnable|uint8|fixed:1|1..2||SYNC-I03 Annex D.2.1.4
102|PTPAddressConfigurations|aggregate|sub|||SYNC-I03 Annex D.2.2
102.1|PTPSourceIPAddressConfiguration|ipv4_or_ipv6|alt:4,16|||SYNC-I03 Annex D.2.2.1
102.2|CMTSPTPIPAddressConfiguration|ipv4_or_ipv6|alt:4,16|||SYNC-I03 Annex D.2.2.2
102.3|PTPDestMulticastMACAddressConfiguration|mac|fixed:6|||SYNC-I03 Annex D.2.2.3
202|eRouter|aggregate|sub|||eRouter-I12
202.1|InitializationMode|uint8|fixed:1|0..3||eRouter-I12 Annex B.4.2
202.2|TR69ManagementServer|aggregate|sub|||eRouter-I12 Annex B.4.3
202.2.1|EnableCWMP|uint8|fixed:1|0..1||eRouter-I12 Annex B.4.3.1
202.2.2|URL|string|var|||eRouter-I12 Annex B.4.3.2
202.2.3|Username|string|var|||eRouter-I12 Annex B.4.3.3
202.2.4|Password|string|var|||eRouter-I12 Annex B.4.3.4
202.2.5|ConnectionRequestUsername|string|var|||eRouter-I12 Annex B.4.3.5
202.2.6|ConnectionRequestPassword|string|var|||eRouter-I12 Annex B.4.3.6
202.2.7|ACSOverride|uint8|fixed:1|0..1||eRouter-I12 Annex B.4.3.7
202.3|InitializationModeOverride|uint8|fixed:1|0..1||eRouter-I12 Annex B.4.4
202.10|RATransmissionInterval|uint16|fixed:2|3..1800||eRouter-I12 Annex B.4.10
202.11|SnmpMibObject|snmp_varbind_ber|var|||eRouter-I12 Annex B.4.8
202.42|TopologyModeEncoding|uint8|fixed:1|1..2||eRouter-I12 Annex B.4.9
202.43|VendorSpecific|aggregate|sub|||eRouter-I12 Annex B.4.7
202.43.8|VendorIdentifier|bytes|var||3..3|eRouter-I12 Annex B.4.7.1
202.53|SNMPv1v2cCoexistenceConfig|aggregate|sub|||eRouter-I12 Annex B.4.5
202.53.1|SNMPv1v2cCommunityName|string|var|||eRouter-I12 Annex B.4.5.1
202.53.2|SNMPv1v2cTransportAddressAccess|aggregate|sub|||eRouter-I12 Annex B.4.5.2
202.53.2.1|SNMPv1v2cTransportAddress|ipv4_or_ipv6+port_u16|alt:6,18|||eRouter-I12 Annex B.4.5.2.1
202.53.2.2|SNMPv1v2cTransportAddressMask|ipv4_or_ipv6+port_u16|alt:6,18|||eRouter-I12 Annex B.4.5.2.2
202.53.3|SNMPv1v2cAccessViewType|uint8|fixed:1|1..2||eRouter-I12 Annex B.4.5.3
202.53.4|SNMPv1v2cAccessViewName|string|var|||eRouter-I12 Annex B.4.5.4
202.54|SNMPv3AccessViewConfiguration|aggregate|sub|||eRouter-I12 Annex B.4.6
202.54.1|SNMPv3AccessViewName|string|var|||eRouter-I12 Annex B.4.6.1
202.54.2|SNMPv3AccessViewSubtree|ber_oid|var|||eRouter-I12 Annex B.4.6.2
202.54.3|SNMPv3AccessViewMask|bytes|var||2..2|eRouter-I12 Annex B.4.6.3
202.54.4|SNMPv3AccessViewType|uint8|fixed:1|1..2||eRouter-I12 Annex B.4.6.4
217|EstbSettings|aggregate|sub|||eDOCSIS-I30 5.2.8.1
217.1|IpModeControl|uint8|fixed:1|0..2||HOST2.1-I17 15.2.6
217.53|Snmpv1v2Settings|aggregate|sub|||HOST2.1-I17 15.2.1
217.53.1|Snmpv1v2CommunityName|string|var||1..32|HOST2.1-I17 15.2.1.1
254|MtaConfigDelimiter|uint8|fixed:1|1..255||PKT-SP-PROV1.5-I04 Chapter 9.1
255|/*EndOfDataMkr*/|end_of_data|none|||MULPIv3.0-I24 Annex C.1.2.1
"""


SUBTREES = {
    # classifiers: 22 upstream (us), 23 downstream (ds), 60 upstream drop (drop)
    "classifier": """\
1|ClassifierRef,drop=ClassifierReference|uint8|fixed:1|1..255||MULPIv3.0-I24 Annex C.2.1.4.1
2|ClassifierId,drop=ClassifierIdentifier|uint16|fixed:2|1..65535||MULPIv3.0-I24 Annex C.2.1.4.2
us,ds:3|ServiceFlowRef|uint16|fixed:2|1..65535||MULPIv3.0-I24 Annex C.2.1.4.3
us,ds:4|ServiceFlowId|uint32|fixed:4|1..4294967295||MULPIv3.0-I24 Annex C.2.1.4.4
5|RulePriority|uint8|fixed:1|0..255||MULPIv3.0-I24 Annex C.2.1.4.5
us,ds:6|ActivationState|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.2.1.4.6
7|DscAction,drop=DynamicServiceChangeAction|uint8|fixed:1|0..2||MULPIv3.0-I24 Annex C.2.1.4.7
9|IpPacketClassifier,drop=IPv4PacketClassification|aggregate|sub|||MULPIv3.0-I24 Annex C.2.1.6
9.1|IpTos,drop=IPv4Tos|bytes|var||3..3|MULPIv3.0-I24 Annex C.2.1.6.1
9.2|IpProto,drop=IPProtocol|uint16|fixed:2|0..257||MULPIv3.0-I24 Annex C.2.1.6.2
9.3|IpSrcAddr,drop=IPv4SourceAddress|ipv4|fixed:4|||MULPIv3.0-I24 Annex C.2.1.6.3
9.4|IpSrcMask,drop=IPv4SourceMask|ipv4|fixed:4|||MULPIv3.0-I24 Annex C.2.1.6.4
9.5|IpDstAddr,drop=IPv4DestinationAddress|ipv4|fixed:4|||MULPIv3.0-I24 Annex C.2.1.6.5
9.6|IpDstMask,drop=IPv4DestinationMask|ipv4|fixed:4|||MULPIv3.0-I24 Annex C.2.1.6.6
9.7|SrcPortStart,drop=SourcePortStart|uint16|fixed:2|0..65535||MULPIv3.0-I24 Annex C.2.1.7.1
9.8|SrcPortEnd,drop=SourcePortEnd|uint16|fixed:2|0..65535||MULPIv3.0-I24 Annex C.2.1.7.2
9.9|DstPortStart,drop=DestinationPortStart|uint16|fixed:2|0..65535||MULPIv3.0-I24 Annex C.2.1.7.3
9.10|DstPortEnd,drop=DestinationPortEnd|uint16|fixed:2|0..65535||MULPIv3.0-I24 Annex C.2.1.7.4
10|LLCPacketClassifier,drop=EthernetLLCPacketClassification|aggregate|sub|||MULPIv3.0-I24 Annex C.2.1.8
10.1|DstMacAddress,drop=DestinationMACAddress|mac+mask|fixed:12|||MULPIv3.0-I24 Annex C.2.1.8.1
10.2|SrcMacAddress,drop=SourceMACAddress|mac|fixed:6|||MULPIv3.0-I24 Annex C.2.1.8.2
10.3|EtherType,drop=EthertypeDSAPMacType|bytes|var||3..3|MULPIv3.0-I24 Annex C.2.1.8.3
11|IEEE802Classifier,drop=IEEE8021PQPacketClassification|aggregate|sub|||MULPIv3.0-I24 Annex C.2.1.9
11.1|UserPriority|uint8_list|n*1|||MULPIv3.0-I24 Annex C.2.1.9.1
11.2|VlanID|uint16|fixed:2|0..4096||MULPIv3.0-I24 Annex C.2.1.9.2
12|PcIPv6PacketClassification,drop=IPv6PacketClassification|aggregate|sub|||MULPIv3.0-I24 Annex C.2.1.10
12.1|PcIPv6TrafficClassRangeAndMask,drop=IPv6TrafficClassRangeandMask|bytes|var||3..3|MULPIv3.0-I24 Annex C.2.1.10.1
12.2|PcIPv6FlowLabel,drop=IPv6FlowLabel|bytes|var||4..4|MULPIv3.0-I24 Annex C.2.1.10.2
12.3|PcIPv6NextHeaderType,drop=IPv6NextHeaderType|uint16|fixed:2|0..257||MULPIv3.0-I24 Annex C.2.1.10.3
12.4|PcIPv6SourceAddress,drop=IPv6SourceAddress|ipv6|fixed:16|||MULPIv3.0-I24 Annex C.2.1.10.4
12.5|PcIPv6SourcePrefixLength,drop=IPv6SourcePrefixLength|uint8|fixed:1|0..128||MULPIv3.0-I24 Annex C.2.1.10.5
12.6|PcIPv6DestAddress,drop=IPv6DestinationAddress|ipv6|fixed:16|||MULPIv3.0-I24 Annex C.2.1.10.6
12.7|PcIPv6DestPrefixLength,drop=IPv6DestinationPrefixLength|uint8|fixed:1|0..128||MULPIv3.0-I24 Annex C.2.1.10.7
13|PcCMIMEncoding,drop=CMInterfaceMaskEncoding|bytes|var|||MULPIv3.0-I24 Annex C.2.1.4.8
14|STagCTagFrameClassification|aggregate|sub|||MULPIv3.0-I24 Annex C.2.1.13
14.1|STPID|bytes|var||2..2|MULPIv3.0-I24 Annex C.2.1.13.1
14.2|SVID|bytes|var||2..2|MULPIv3.0-I24 Annex C.2.1.13.2
14.3|SPCP|bytes|var||1..1|MULPIv3.0-I24 Annex C.2.1.13.3
14.4|SDEI|bytes|var||1..1|MULPIv3.0-I24 Annex C.2.1.13.4
14.5|CTPID|bytes|var||2..2|MULPIv3.0-I24 Annex C.2.1.13.5
14.6|CVID|bytes|var||2..2|MULPIv3.0-I24 Annex C.2.1.13.6
14.7|CPCP|bytes|var||1..1|MULPIv3.0-I24 Annex C.2.1.13.7
14.8|CCFI|bytes|var||1..1|MULPIv3.0-I24 Annex C.2.1.13.8
14.9|STCI|bytes|var||2..2|MULPIv3.0-I24 Annex C.2.1.13.9
14.10|CTCI|bytes|var||2..2|MULPIv3.0-I24 Annex C.2.1.13.10
15|IEEE8021ahPacketClassification|aggregate|sub|||MULPIv3.0-I24 Annex C.2.1.14
15.1|ITPID|bytes|var||2..2|MULPIv3.0-I24 Annex C.2.1.14.1
15.2|ISID|bytes|var||3..3|MULPIv3.0-I24 Annex C.2.1.14.2
15.3|ITCI|bytes|var||5..5|MULPIv3.0-I24 Annex C.2.1.14.3
15.4|IPCP|bytes|var||1..1|MULPIv3.0-I24 Annex C.2.1.14.4
15.5|IDEI|bytes|var||1..1|MULPIv3.0-I24 Annex C.2.1.14.5
15.6|IUCA|bytes|var||1..1|MULPIv3.0-I24 Annex C.2.1.14.6
15.7|BTPID|bytes|var||2..2|MULPIv3.0-I24 Annex C.2.1.14.7
15.8|BTCI|bytes|var||2..2|MULPIv3.0-I24 Annex C.2.1.14.8
15.9|BPCP|bytes|var||1..1|MULPIv3.0-I24 Annex C.2.1.14.9
15.10|BDEI|bytes|var||1..1|MULPIv3.0-I24 Annex C.2.1.14.10
15.11|BVID|bytes|var||2..2|MULPIv3.0-I24 Annex C.2.1.14.11
15.12|BDA|mac|fixed:6|||MULPIv3.0-I24 Annex C.2.1.14.12
15.13|BSA|mac|fixed:6|||MULPIv3.0-I24 Annex C.2.1.14.13
16|ICMPv4ICMPv6PacketClassification|aggregate|sub|||MULPIv3.0-I24 Annex C.2.1.12
16.1|ICMPv4ICMPv6TypeStart|uint8|fixed:1|0..255||MULPIv3.0-I24 Annex C.2.1.12.1
16.2|ICMPv4ICMPv6TypeEnd|uint8|fixed:1|0..255||MULPIv3.0-I24 Annex C.2.1.12.2
17|MPLSClassificationEncoding|aggregate|sub|||MULPIv3.0-I24 Annex C.2.1.15
17.1|MPLSTCbits|bytes|var||1..1|MULPIv3.0-I24 Annex C.2.1.15.1
17.2|MPLSLabel|bytes|var||3..3|MULPIv3.0-I24 Annex C.2.1.15.2
43|VendorSpecific|aggregate|sub|||MULPIv3.0-I24 Annex C.2.1.11|@vendor_specific
""",
    # service flows: 24 upstream (us), 25 downstream (ds)
    "service_flow": """\
1|UsServiceFlowRef,ds=DsServiceFlowRef|uint16|fixed:2|1..65535||MULPIv3.0-I24 Annex C.2.2.5.1
2|UsServiceFlowId,ds=DsServiceFlowId|uint32|fixed:4|1..4294967295||MULPIv3.0-I24 Annex C.2.2.5.2
us:3|ServiceIdentifier|uint16|fixed:2|||MULPIv3.0-I24 Annex C.2.2.5.3
4|ServiceClassName|string_nul|nul||2..16|MULPIv3.0-I24 Annex C.2.2.5.4
6|QosParamSetType|uint8|fixed:1|0..255||MULPIv3.0-I24 Annex C.2.2.5.5
7|TrafficPriority|uint8|fixed:1|0..7||MULPIv3.0-I24 Annex C.2.2.7.1
8|MaxRateSustained|uint32|fixed:4|||MULPIv3.0-I24 Annex C.2.2.7.2
9|MaxTrafficBurst|uint32|fixed:4|||MULPIv3.0-I24 Annex C.2.2.7.3
10|MinReservedRate|uint32|fixed:4|||MULPIv3.0-I24 Annex C.2.2.7.4
11|MinResPacketSize|uint16|fixed:2|0..65535||MULPIv3.0-I24 Annex C.2.2.7.5
12|ActQosParamsTimeout|uint16|fixed:2|0..65535||MULPIv3.0-I24 Annex C.2.2.7.6
13|AdmQosParamsTimeout|uint16|fixed:2|0..65535||MULPIv3.0-I24 Annex C.2.2.7.7
us:14|MaxConcatenatedBurst|uint16|fixed:2|0..65535||MULPIv3.0-I24 Annex C.2.2.8.1
ds:14|MaxDsLatency|uint32|fixed:4|||MULPIv3.0-I24 Annex C.2.2.9.1
us:15|SchedulingType|uint8|fixed:1|0..6||MULPIv3.0-I24 Annex C.2.2.8.2
us:16|RequestOrTxPolicy|bytes|var||4..4|MULPIv3.0-I24 Annex C.2.2.8.3
us:17|NominalPollInterval|uint32|fixed:4|||MULPIv3.0-I24 Annex C.2.2.8.4
ds:17|DsResequencing|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.2.2.9.2
us:18|ToleratedPollJitter|uint32|fixed:4|||MULPIv3.0-I24 Annex C.2.2.8.5
us:19|UnsolicitedGrantSize|uint16|fixed:2|0..65535||MULPIv3.0-I24 Annex C.2.2.8.6
us:20|NominalGrantInterval|uint32|fixed:4|||MULPIv3.0-I24 Annex C.2.2.8.7
us:21|ToleratedGrantJitter|uint32|fixed:4|||MULPIv3.0-I24 Annex C.2.2.8.8
us:22|GrantsPerInterval|uint8|fixed:1|0..127||MULPIv3.0-I24 Annex C.2.2.8.9
23|IpTosOverwrite|bytes|var||2..2|MULPIv3.0-I24 Annex C.2.2.7.9
us:26|MultipliertoNumberofBytesRequested|uint8|fixed:1|1..16||MULPIv3.0-I24 Annex C.2.2.8.12
us:27|UpstreamPeakTrafficRate|uint32|fixed:4|||MULPIv3.0-I24 Annex C.2.2.7.10.1
ds:27|DownstreamPeakTrafficRate|uint32|fixed:4|||MULPIv3.0-I24 Annex C.2.2.7.10.2
31|ServiceFlowRequiredAttributeMask|bytes|var||4..4|MULPIv3.0-I24 Annex C.2.2.5.6
32|ServiceFlowForbiddenAttributeMask|bytes|var||4..4|MULPIv3.0-I24 Annex C.2.2.5.7
33|ServiceFlowAttributeAggregationRuleMask|bytes|var||4..4|MULPIv3.0-I24 Annex C.2.2.5.8
34|ApplicationIdentifier|uint32|fixed:4|||MULPIv3.0-I24 Annex C.2.2.5.9
35|BufferControl|aggregate|sub|||MULPIv3.0-I24 Annex C.2.2.7.11.1
35.1|MinimumBuffer|uint32|fixed:4|0..4294967295||MULPIv3.0-I24 Annex C.2.2.7.11.3
35.2|TargetBuffer|uint32|fixed:4|0..4294967295||MULPIv3.0-I24 Annex C.2.2.7.11.4
35.3|MaximumBuffer|uint32|fixed:4|0..4294967295||MULPIv3.0-I24 Annex C.2.2.7.11.5
36|UpstreamAggregateServiceFlowReference,ds=DownstreamAggregateServiceFlowReference|uint16|fixed:2|1..65535||MULPIv3.0-I24 Annex C.2.2.5.10
37|UpstreamMESPReference,ds=DownstreamMESPReference|uint16|fixed:2|1..65535||MULPIv3.0-I24 Annex C.2.2.5.11
us:39|SFtoIATCProfileNameReference|string_nul|nul||2..16|MULPIv3.1-I25 Annex C.2.2.7.14
ds:39|SFtoIATCProfileNameReference|string_nul|nul||2..16|MULPIv3.1-I25 Annex C.2.2.9.14
40|AQMEncodings|aggregate|sub|||MULPIv3.0-I24 Annex C.2.2.7.12
40.1|SFAQMDisable|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.2.2.7.12.3
40.2|SFAQMLatencyTarget|uint8|fixed:1|0..255||MULPIv3.0-I24 Annex C.2.2.7.12.4
40.3|AQMAlgorithm|uint8|fixed:1|0..2||MULPIv3.1-I25 Annex C.2.2.9.15.3
40.4|ImmediateAQMMaxThreshold|uint16|fixed:2|||MULPIv3.1-I25 Annex C.2.2.9.15.4
40.5|ImmediateAQMRangeExponent|uint8|fixed:1|0..25||MULPIv3.1-I25 Annex C.2.2.9.15.5
40.6|LatencyHistogramEncodings|uint16_list|n*2|1..15||MULPIv3.1-I25 Annex C.2.2.9.15.6
41|DataRateUnitSetting|uint8|fixed:1|0..3||MULPIv3.0-I24 Annex C.2.2.7.13.1
43|VendorSpecific|aggregate|sub|||MULPIv3.0-I24 Annex C.2.1.11|@vendor_specific
us:44|GuaranteedGrantInterval|uint16|fixed:2|||MULPIv3.1-I25 Annex C.2.2.10.13
us:45|GuaranteedGrantRate|uint32|fixed:4|||MULPIv3.1-I25 Annex C.2.2.10.14
us:46|GuaranteedRequestInterval|uint16|fixed:2|||MULPIv3.1-I25 Annex C.2.2.10.15
us:48|AbsoluteQueueDepthRequestEnable|uint8|fixed:1|0..1||MULPIv3.1-I25 Annex C.2.2.10.17
us:49|PGSActivityDetectionDisable|uint8|fixed:1|0..1||MULPIv3.1-I25 Annex C.2.2.10.16
""",
    # aggregate service flows: 70 upstream (us), 71 downstream (ds)
    "aggregate_service_flow": """\
1|UpstreamServiceFlowReference,ds=DownstreamServiceFlowReference|uint16|fixed:2|1..65535||MULPIv3.0-I24 Annex C.2.2.5.1
4|ASFQoSProfileName|string_nul|nul||2..16|MULPIv3.1-I25 Annex C.2.2.9.12
7|TrafficPriority|uint8|fixed:1|0..7||MULPIv3.1-I25 Annex C.2.2.9.1
us:8|MaxRateSustained|uint32|fixed:4|||MULPIv3.1-I25 Annex C.2.2.9.2.1
ds:8|MaxRateSustained|uint32|fixed:4|||MULPIv3.1-I25 Annex C.2.2.9.2.2
9|MaxTrafficBurst|uint32|fixed:4|||MULPIv3.1-I25 Annex C.2.2.9.3
10|MinReservedRate|uint32|fixed:4|||MULPIv3.1-I25 Annex C.2.2.9.4
11|MinResPacketSize|uint16|fixed:2|0..65535||MULPIv3.1-I25 Annex C.2.2.9.5
27|UpstreamPeakTrafficRate,ds=DownstreamPeakTrafficRate|uint32|fixed:4|||MULPIv3.1-I25 Annex C.2.2.9.10.1
37|UpstreamMESPReference,ds=DownstreamMESPReference|uint16|fixed:2|1..65535||MULPIv3.0-I24 Annex C.2.2.5.11
38|ServiceFlowMatchingCriteria|aggregate|sub|||MULPIv3.1-I25 Annex C.2.2.9.13
38.1|MatchingbyApplicationId|uint32|fixed:4|0..1||MULPIv3.1-I25 Annex C.2.2.9.13.1
38.2|MatchingbyServiceClassName|string_nul|nul||2..16|MULPIv3.1-I25 Annex C.2.2.9.13.2
38.3|MatchingbyTrafficPriorityRange|uint8_list|n*1|2..2||MULPIv3.1-I25 Annex C.2.2.9.13.3
41|DataRateUnitSetting|uint8|fixed:1|0..3||MULPIv3.1-I25 Annex C.2.2.9.16
42|LowLatencyAggregateSFEncodings|aggregate|sub|||MULPIv3.1-I25 Annex C.2.2.9.17
42.1|LowLatencyServiceFlowReference|uint16|fixed:2|1..65535||MULPIv3.1-I25 Annex C.2.2.9.17.1
42.3|ClassicSFSCN|string_nul|nul||2..16|MULPIv3.1-I25 Annex C.2.2.9.17.3
42.4|LowLatencySFSCN|string_nul|nul||2..16|MULPIv3.1-I25 Annex C.2.2.9.17.4
42.5|AQMCouplingFactor|uint8|fixed:1|||MULPIv3.1-I25 Annex C.2.2.9.17.5
42.6|SchedulingWeight|uint8|fixed:1|1..255||MULPIv3.1-I25 Annex C.2.2.9.17.6
42.7|QueueProtectionEnable|uint8|fixed:1|0..1||MULPIv3.1-I25 Annex C.2.2.9.17.7
42.8|QPLatencyThreshold|uint16|fixed:2|||MULPIv3.1-I25 Annex C.2.2.9.17.8
42.9|QPQueuingScoreThreshold|uint16|fixed:2|||MULPIv3.1-I25 Annex C.2.2.9.17.9
42.10|QPDrainRateExponent|uint8|fixed:1|||MULPIv3.1-I25 Annex C.2.2.9.17.10
""",
    # TLV 43 and every .43: typed under vendor ID 0xFFFFFF only (hfcprov.config.dictionary.children_for)
    "vendor_specific": """\
1|CMLoadBalancingPolicyID|uint32|fixed:4|||MULPIv3.0-I24 Annex C.1.1.18.1.1
2|CMLoadBalancingPriority|uint32|fixed:4|||MULPIv3.0-I24 Annex C.1.1.18.1.2
3|CMLoadBalancingGroupID|uint32|fixed:4|||MULPIv3.0-I24 Annex C.1.1.18.1.3
4|CMRangingClassIDExtension|uint16|fixed:2|||MULPIv3.0-I24 Annex C.1.1.18.1.4
5|L2VPNEncoding|aggregate|sub|||MULPIv3.0-I24 Annex C.1.1.18.1.5|@l2vpn
6|ExtendedCMTSMICConfiguration,+ExtendedCMTSMICConfigurationSetting|aggregate|sub|||MULPIv3.0-I24 Annex C.1.1.18.1.6
6.1|ExtendedCMTSMICHMACDigestType,+ExtendedCMTSMICHMACtype|uint8|fixed:1|||MULPIv3.0-I24 Annex C.1.1.18.1.6.1
6.2|ExtendedCMTSMICHMACBitmap,+ExtendedCMTSMICBitmap|bytes|var|||MULPIv3.0-I24 Annex C.1.1.18.1.6.2
6.3|ExtendedCMTSMICHMACDigest,+ExplicitExtendedCMTSMICDigest|bytes|var|||MULPIv3.0-I24 Annex C.1.1.18.1.6.3
7|SAVAuthorizationEncoding|aggregate|sub|||MULPIv3.0-I24 Annex C.1.1.18.1.7
7.1|SAVGroupName|string|var||1..15|MULPIv3.0-I24 Annex C.1.1.18.1.7.1
7.2|SAVStaticPrefixRule|aggregate|sub|||MULPIv3.0-I24 Annex C.1.1.18.1.7.2
7.2.1|SAVStaticPrefixAddress|ipv4_or_ipv6|alt:4,16|||MULPIv3.0-I24 Annex C.1.1.18.1.7.2.1
7.2.2|SAVStaticPrefixLength|uint8|fixed:1|||MULPIv3.0-I24 Annex C.1.1.18.1.7.2.2
8|VendorIdentifier|bytes|var||3..3|MULPIv3.0-I24 Annex C.2.1.11
9|CMAttributeMasks|aggregate|sub|||MULPIv3.0-I24 Annex C.1.1.18.1.8
9.1|CMDownstreamRequiredAttributeMask|bytes|var||4..4|MULPIv3.0-I24 Annex C.1.1.18.1.8.1
9.2|CMDownstreamForbiddenAttributeMask|bytes|var||4..4|MULPIv3.0-I24 Annex C.1.1.18.1.8.2
9.3|CMUpstreamRequiredAttributeMask|bytes|var||4..4|MULPIv3.0-I24 Annex C.1.1.18.1.8.3
9.4|CMUpstreamForbiddenAttributeMask|bytes|var||4..4|MULPIv3.0-I24 Annex C.1.1.18.1.8.4
10|IPMulticastJoinAuthorization|aggregate|sub|||MULPIv3.0-I24 Annex C.1.1.18.1.9
10.1|IPMulticastProfileName|string|var||1..15|MULPIv3.0-I24 Annex C.1.1.18.1.9.1
10.2|IPMulticastJoinAuthStaticSessionRule|aggregate|sub|||MULPIv3.0-I24 Annex C.1.1.18.1.9.2
10.2.1|MulticastRulePriority|uint8|fixed:1|0..255||MULPIv3.0-I24 Annex C.1.1.18.1.9.2.1
10.2.2|AuthorizationAction|uint8|fixed:1|0..1||MULPIv3.0-I24 Annex C.1.1.18.1.9.2.2
10.2.3|SourcePrefixAddress|ipv4_or_ipv6|alt:4,16|||MULPIv3.0-I24 Annex C.1.1.18.1.9.2.3
10.2.4|SourcePrefixLength|uint8|fixed:1|0..128||MULPIv3.0-I24 Annex C.1.1.18.1.9.2.4
10.2.5|GroupPrefixAddress|ipv4_or_ipv6|alt:4,16|||MULPIv3.0-I24 Annex C.1.1.18.1.9.2.5
10.2.6|GroupPrefixLength|uint8|fixed:1|0..128||MULPIv3.0-I24 Annex C.1.1.18.1.9.2.6
10.3|MaximumMulticastSessions|uint16|fixed:2|||MULPIv3.0-I24 Annex C.1.1.18.1.9.3
11|ServiceTypeIdentifier|string|var||1..16|MULPIv3.0-I24 Annex C.1.1.18.1.10
12|DEMARCAutoConfiguration|aggregate|sub|||MULPIv3.0-I24 Annex C.1.1.18.1.11
12.1|DACDisableEnableConfig|uint8|fixed:1|0..1||DEMARCv1.0-I04 Annex B.1
12.2|CMIMEncoding|bytes|var|||DEMARCv1.0-I04 Annex B.2
12.3|UpstreamServiceClassName|string_nul|nul||2..16|DEMARCv1.0-I04 Annex B.3
12.4|DownstreamServiceClassName|string_nul|nul||2..16|DEMARCv1.0-I04 Annex B.4
""",
    # L2VPN encoding (43.5): L2VPN-I13 Annex B
    "l2vpn": """\
1|VPNIdentifier|bytes|var||4..255|L2VPN-I13 Annex B.3.1
2|NSIEncapsulation|aggregate|sub|||L2VPN-I13 Annex B.3.2
2.1|ServiceMultiplexingValueOther|empty|fixed:0|||L2VPN-I13 Annex B.3.2
2.2|NSIEncapsulationSingleQTag|uint16|fixed:2|0..4096||L2VPN-I13 Annex B.3.2
2.3|NSIEncapsulationDualQTag|dual_qtag|fixed:4|||L2VPN-I13 Annex B.3.2
2.4|ServiceMultiplexingValueMPLSPW|aggregate|sub|||L2VPN-I13 Annex B.3.2
2.4.1|MPLSPseudowireID|uint32|fixed:4|||L2VPN-I13 Annex B.3.2
2.4.2|MPLSPeerIpAddress|addrtype_u8+ipv4_or_ipv6|alt:5,17|||L2VPN-I13 Annex B.3.2
2.4.3|MPLSPseudowireType|uint8|fixed:1|||L2VPN-I13 Annex B.3.2
2.4.4|MPLSBackupPseudowireID|uint32|fixed:4|||L2VPN-I13 Annex B.3.2
2.4.5|MPLSBackupPeerIpAddress|addrtype_u8+ipv4_or_ipv6|alt:5,17|||L2VPN-I13 Annex B.3.2
2.5|ServiceMultiplexingValueL2TPv3Peer|addrtype_u8+ipv4_or_ipv6|alt:5,17|||L2VPN-I13 Annex B.3.2
2.6|IEEE8021ahEncapsulation|aggregate|sub|||L2VPN-I13 Annex B.3.2.2
2.6.1|ITCIEncapsulation|bytes|var||4..4|L2VPN-I13 Annex B.3.2.2.1
2.6.2|BDAEncapsulation|bytes|var||6..6|L2VPN-I13 Annex B.3.2.2.2
2.6.3|BTCIEncapsulation|bytes|var||2..2|L2VPN-I13 Annex B.3.2.2.3
2.6.4|ITPIDEncapsulation|bytes|var||2..2|L2VPN-I13 Annex B.3.2.2.4
2.6.5|IPCPEncapsulation|bytes|var||1..1|L2VPN-I13 Annex B.3.2.2.5
2.6.6|IDEIEncapsulation|bytes|var||1..1|L2VPN-I13 Annex B.3.2.2.6
2.6.7|IUCAEncapsulation|bytes|var||1..1|L2VPN-I13 Annex B.3.2.2.7
2.6.8|ISIDEncapsulation|bytes|var||3..3|L2VPN-I13 Annex B.3.2.2.8
2.6.9|BTPIDEncapsulation|bytes|var||2..2|L2VPN-I13 Annex B.3.2.2.9
2.6.10|BPCPEncapsulation|bytes|var||1..1|L2VPN-I13 Annex B.3.2.2.10
2.6.11|BDEIEncapsulation|bytes|var||1..1|L2VPN-I13 Annex B.3.2.2.11
2.6.12|BVIDEncapsulation|bytes|var||2..2|L2VPN-I13 Annex B.3.2.2.11
2.8|ServiceMultiplexingValueIEEE8021adSTPID|bytes|var||2..2|L2VPN-I13 Annex B.3.2.1
3|eSAFEDHCPSnooping|bytes|var|||L2VPN-I13 Annex B.3.3
4|CMInterfaceMaskCMIMSubtype|bytes|var|||L2VPN-I13 Annex B.3.4
5|AttachmentGroupID|bytes|var|||L2VPN-I13 Annex B.3.5
6|SourceAttachmentIndividualID|bytes|var|||L2VPN-I13 Annex B.3.6
7|TargetAttachmentIndividualID|bytes|var|||L2VPN-I13 Annex B.3.7
8|IngressUserPriority|uint8|fixed:1|0..7||L2VPN-I13 Annex B.3.8
9|UserPriorityRange|uint8_list|n*1|||L2VPN-I13 Annex B.3.9
10|L2VPNSADescriptorSubtype|bytes|var||14..14|L2VPN-I13 Annex B.3.10
12|PseudowireType|uint8|fixed:1|4..5||L2VPN-I13 Annex B.3.13
13|L2VPNMode|uint8|fixed:1|0..1||L2VPN-I13 Annex B.3.14
14|TPIDTranslation|aggregate|sub|||L2VPN-I13 Annex B.3.15
14.1|UpstreamTPIDTranslation|bytes|var||2..2|L2VPN-I13 Annex B.3.15.1
14.2|DownstreamTPIDTranslation|bytes|var||2..2|L2VPN-I13 Annex B.3.15.1
14.3|UpstreamSTPIDTranslation|bytes|var||2..2|L2VPN-I13 Annex B.3.15.1
14.4|DownstreamSTPIDTranslation|bytes|var||2..2|L2VPN-I13 Annex B.3.15.1
14.5|UpstreamBTPIDTranslation|bytes|var||2..2|L2VPN-I13 Annex B.3.15.1
14.6|DownstreamBTPIDTranslation|bytes|var||2..2|L2VPN-I13 Annex B.3.15.1
14.7|UpstreamITPIDTranslation|bytes|var||2..2|L2VPN-I13 Annex B.3.15.1
14.8|DownstreamITPIDTranslation|bytes|var||2..2|L2VPN-I13 Annex B.3.15.1
15|L2CPProcessing|aggregate|sub|||L2VPN-I13 Annex B.3.16
15.1|L2CPTunnelMode|uint8|fixed:1|0..1||L2VPN-I13 Annex B.3.16.1
15.2|L2CPDMACAddress|mac|fixed:6|||L2VPN-I13 Annex B.3.16.1
15.3|L2CPOverwrotingDMACAddress|mac|fixed:6|||L2VPN-I13 Annex B.3.16.1
16|DACDisableEnableConfiguration|uint8|fixed:1|0..1||L2VPN-I13 Annex B.3.17
18|PseudowireClass|bytes|var|||L2VPN-I13 Annex B.3.18
19|ServiceDelimiter|aggregate|sub|||L2VPN-I13 Annex B.3.19
19.1|CVIDDelimiter|bytes|var||2..2|L2VPN-I13 Annex B.3.19.1
19.2|SVIDDelimiter|bytes|var||2..2|L2VPN-I13 Annex B.3.19.2
19.3|ISIDDelimiter|bytes|var||3..3|L2VPN-I13 Annex B.3.19.3
19.4|BVIDDelimiter|bytes|var||2..2|L2VPN-I13 Annex B.3.19.4
20|VirtualSwitchInstanceEncoding|aggregate|sub|||L2VPN-I13 Annex B.3.20
20.1|VPLSClass|bytes|var|||L2VPN-I13 Annex B.3.20.1
20.2|ETreeRole|uint8|fixed:1|0..1||L2VPN-I13 Annex B.3.20.2
20.3|ETreeRootVID|bytes|var||2..2|L2VPN-I13 Annex B.3.20.3
20.4|ETreeLeafVID|bytes|var||2..2|L2VPN-I13 Annex B.3.20.4
21|BGPAttribute|aggregate|sub|||L2VPN-I13 Annex B.3.21
21.1|BGPVPNID|uint32|fixed:4|||L2VPN-I13 Annex B.3.21.1
21.2|RouteDistinguisher|bytes|var||8..8|L2VPN-I13 Annex B.3.21.2
21.3|RouteTargetImport|bytes|var|||L2VPN-I13 Annex B.3.21.3
21.4|RouteTargetExport|bytes|var|||L2VPN-I13 Annex B.3.21.4
21.5|CEIDVEID|uint16|fixed:2|||L2VPN-I13 Annex B.3.21.5
23|PseudowireSignaling|uint8|fixed:1|0..2||L2VPN-I13 Annex B.3.23
24|SOAMSubtype|aggregate|sub|||L2VPN-I13 Annex B.3.24
24.1|MEPConfiguration|aggregate|sub|||L2VPN-I13 Annex B.3.24.1
24.1.1|MDLevel|uint8|fixed:1|0..7||L2VPN-I13 Annex B.3.24.1.1
24.1.2|MDName|string|var||2..16|L2VPN-I13 Annex B.3.24.1.2
24.1.3|MAName|string|var||2..28|L2VPN-I13 Annex B.3.24.1.3
24.1.4|MEPID|uint16|fixed:2|1..8191||L2VPN-I13 Annex B.3.24.1.4
24.2|RemoteMEPConfiguration|aggregate|sub|||L2VPN-I13 Annex B.3.24.2
24.2.1|RemoteMDLevel|uint8|fixed:1|0..7||L2VPN-I13 Annex B.3.24.2.1
24.2.2|RemoteMDName|string|var||2..16|L2VPN-I13 Annex B.3.24.2.2
24.2.3|RemoteMAName|string|var||2..28|L2VPN-I13 Annex B.3.24.2.3
24.2.4|RemoteMEPID|uint16|fixed:2|1..8191||L2VPN-I13 Annex B.3.24.2.4
24.3|FaultManagementConfiguration|aggregate|sub|||L2VPN-I13 Annex B.3.24.3
24.3.1|ContinuityCheckMessages|uint8|fixed:1|0..2||L2VPN-I13 Annex B.3.24.3.1
24.3.2|LoopbackFunction|uint8|fixed:1|0..1||L2VPN-I13 Annex B.3.24.3.2
24.3.3|LinktraceFunction|uint8|fixed:1|0..1||L2VPN-I13 Annex B.3.24.3.3
24.4|PerformanceManagementConfiguration|aggregate|sub|||L2VPN-I13 Annex B.3.24.4
24.4.1|FrameDelayMeasurement|aggregate|sub|||L2VPN-I13 Annex B.3.24.4.1
24.4.1.1|FrameDelayMeasurementEnable|uint8|fixed:1|0..1||L2VPN-I13 Annex B.3.24.4.1.1
24.4.1.2|FrameDelayMeasurementOneWayTwoWay|uint8|fixed:1|0..1||L2VPN-I13 Annex B.3.24.4.1.2
24.4.1.3|FrameDelayMeasurementTransmissionPeriodicity|uint16|fixed:2|||L2VPN-I13 Annex B.3.24.4.1.3
24.4.2|FrameLossMeasurement|aggregate|sub|||L2VPN-I13 Annex B.3.24.4.2
24.4.2.1|FrameLossMeasurementEnable|uint8|fixed:1|0..1||L2VPN-I13 Annex B.3.24.4.2.1
24.4.2.2|FrameLossMeasurementTransmissionPeriodicity|uint8|fixed:1|||L2VPN-I13 Annex B.3.24.4.2.2
26|L2VPNDSID|uint24|fixed:3|1..1048575||L2VPN-I13 Annex B.3.26
43|VendorSpecificL2VPNSubtype|aggregate|sub|||L2VPN-I13 Annex B.3.11
43.8|VendorIdentifier|bytes|var||3..3|L2VPN-I13 Annex B.3.11
""",
}

ALIASES = (
    ('11', 'DigitMap'),
    ('32', 'ManufacturerCVC'),
    ('33', 'CoSignerCVC'),
    ('81', 'ManufacturerCVCChainFile'),
    ('82', 'CoSignerCVCChainFile'),
    ('0', 'GenericTLV'),
)
# fmt: on

# Enumerated values by TLV name (the same name means the same field under 22/23/60, 24/25,
# 53/202.53...). The text form accepts the label or the number and renders the number, as
# other tools do; ``hfcprov config tlvs`` lists the labels.
ENUMS = {
    "NetworkAccess": {0: "denied", 1: "permitted"},
    "GlobalPrivacyEnable": {0: "disabled", 1: "enabled"},
    "ActivationState": {0: "inactive", 1: "active"},
    "DynamicServiceChangeAction": {0: "add", 1: "replace", 2: "delete"},
    "DscAction": {0: "add", 1: "replace", 2: "delete"},
    "SchedulingType": {1: "undefined", 2: "bestEffort", 3: "nonRealTimePolling", 4: "realTimePolling",
                       5: "unsolicitedGrantWithActivityDetection", 6: "unsolicitedGrant"},
    "DataRateUnitSetting": {0: "bps", 1: "kbps", 2: "Mbps", 3: "Gbps"},
    "SFAQMDisable": {0: "aqmEnabled", 1: "aqmDisabled"},
    "SnmpV3TrapRxType": {1: "snmpv1Trap", 2: "snmpv2cTrap", 3: "snmpInform", 4: "snmpv3Trap", 5: "snmpv3Inform"},
    "SNMPv1v2cAccessViewType": {1: "readOnly", 2: "readWrite"},
    "SNMPv3AccessViewType": {1: "included", 2: "excluded"},
    "InitializationMode": {0: "disabled", 1: "ipv4", 2: "ipv6", 3: "dualStack"},
}
