// Scenario D - "sqrtn": the long flows of `quicksim reproduce buffer-sizing-sqrt-n`
// (Appenzeller, Keslassy, McKeown 2004), for `quicksim bench --vs-ns3 sqrtn-155m-200-tcp`.
//
// N (default 200) TCP NewReno bulk flows over a 155 Mbit/s bottleneck with 5 ms one-way
// delay and a DropTail FIFO of `queue` (default 91 packets = RTT x C / sqrt(200) at the mean
// RTT of 100 ms), 1500 B MTU. The flows' two-way propagation delays are spread over
// [rttMin, rttMax] (80-120 ms) as `classes` (10) equal-width classes at their midpoints: one
// sender/receiver pair per class, whose sender access link carries the rest of the class's
// RTT (RTT / 2 - 5 ms each way), and N / classes flows per pair (flow k on pair k / (N /
// classes)), as quicksim's `model.long_flows_doc`. Access links 100 Gbit/s. Each flow starts
// at a time uniform over [0, startSpread] (2 s), drawn from ns-3's RNG stream for the run.
//
// Outputs (in --outdir): summary.json (utilization, drops, per-flow received bytes, events,
// wall time); the JSON is also printed on stdout as the last line.
#include "common.h"

#include <ctime>

using namespace ns3;
using namespace anchor;

int
main(int argc, char* argv[])
{
    uint32_t nFlows = 200;
    uint32_t classes = 10;
    double simTime = 30.0;
    double warmup = 5.0;
    double binWidth = 0.5;
    double startSpread = 2.0;
    double rttMin = 0.080;
    double rttMax = 0.120;
    std::string rate = "155Mbps";
    double delay = 0.005;
    std::string accessRate = "100Gbps";
    uint32_t mtu = 1500;
    uint32_t mss = 1448;
    std::string queue = "91p";
    uint32_t buf = 1 << 20;
    uint32_t delAck = 2;
    std::string outdir = "out/sqrtn";
    uint32_t seed = 1;
    uint32_t run = 1;

    CommandLine cmd(__FILE__);
    cmd.AddValue("nFlows", "number of TCP flows (a multiple of classes)", nFlows);
    cmd.AddValue("classes", "RTT classes (= sender/receiver pairs)", classes);
    cmd.AddValue("simTime", "simulated seconds", simTime);
    cmd.AddValue("warmup", "start of the utilization window (s)", warmup);
    cmd.AddValue("startSpread", "flows start uniformly in [0, startSpread] s", startSpread);
    cmd.AddValue("rttMin", "smallest two-way propagation delay (s)", rttMin);
    cmd.AddValue("rttMax", "largest two-way propagation delay (s)", rttMax);
    cmd.AddValue("rate", "bottleneck rate", rate);
    cmd.AddValue("delay", "bottleneck one-way delay (s)", delay);
    cmd.AddValue("accessRate", "access link rate", accessRate);
    cmd.AddValue("mtu", "IP MTU of every link (bytes)", mtu);
    cmd.AddValue("mss", "TCP SegmentSize (payload bytes)", mss);
    cmd.AddValue("queue", "bottleneck FifoQueueDisc MaxSize", queue);
    cmd.AddValue("buf", "TCP SndBufSize and RcvBufSize (bytes)", buf);
    cmd.AddValue("delAck", "TcpSocket::DelAckCount", delAck);
    cmd.AddValue("outdir", "output folder", outdir);
    cmd.AddValue("seed", "RngSeedManager seed", seed);
    cmd.AddValue("run", "RngSeedManager run number", run);
    cmd.Parse(argc, argv);
    if (classes == 0 || nFlows % classes != 0)
    {
        std::cerr << "sqrtn: nFlows " << nFlows << " is not a multiple of classes " << classes
                  << "\n";
        return 2;
    }
    if (rttMin / 2 < delay)
    {
        std::cerr << "sqrtn: rttMin " << rttMin << " s is below twice the bottleneck delay\n";
        return 2;
    }

    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(buf));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(buf));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delAck));

    auto tSetup0 = Clock::now();

    DumbbellConfig cfg;
    cfg.nPairs = classes;
    cfg.bottleneckRate = rate;
    cfg.bottleneckDelay = std::to_string(std::llround(delay * 1e9)) + "ns";
    cfg.accessRate = accessRate;
    cfg.accessDelay = "0ms";
    cfg.mtu = mtu;
    cfg.bottleneckQueue = queue;
    std::vector<double> rtts;
    for (uint32_t c = 0; c < classes; ++c)
    {
        const double rtt = rttMin + (rttMax - rttMin) * (c + 0.5) / classes;
        rtts.push_back(rtt);
        // Whole nanoseconds: ns-3's time resolution here, and what quicksim's access_delays get.
        const auto ns = static_cast<long long>(std::llround((rtt / 2 - delay) * 1e9));
        cfg.senderAccessDelays.push_back(std::to_string(ns) + "ns");
    }

    Counters ctr;
    ctr.binWidth = binWidth;
    ctr.bnDropsPerBin.assign(static_cast<size_t>(std::ceil(simTime / binWidth - 1e-9)), 0);
    Dumbbell d = BuildDumbbell(cfg, &ctr);

    RxBins bins;
    bins.Init(nFlows, simTime, binWidth);
    std::vector<RxCtx> rxCtx(nFlows);
    Ptr<UniformRandomVariable> start = CreateObject<UniformRandomVariable>();
    start->SetAttribute("Min", DoubleValue(0.0));
    start->SetAttribute("Max", DoubleValue(startSpread));
    const uint32_t perClass = nFlows / classes;
    for (uint32_t k = 0; k < nFlows; ++k)
    {
        const uint32_t pair = k / perClass;
        const uint16_t port = static_cast<uint16_t>(5000 + k % perClass);
        PacketSinkHelper sink("ns3::TcpSocketFactory",
                              InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sa = sink.Install(d.receivers.Get(pair));
        sa.Start(Seconds(0));
        sa.Stop(Seconds(simTime));
        rxCtx[k] = {&bins, k};
        sa.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnSinkRx, &rxCtx[k]));

        BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(d.receiverAddr[pair], port));
        src.SetAttribute("MaxBytes", UintegerValue(0));
        src.SetAttribute("SendSize", UintegerValue(mss));
        ApplicationContainer ca = src.Install(d.senders.Get(pair));
        ca.Start(Seconds(start->GetValue()));
        ca.Stop(Seconds(simTime));
    }

    Simulator::Stop(Seconds(simTime));
    auto tRun0 = Clock::now();
    const std::clock_t cpu0 = std::clock();
    Simulator::Run();
    const std::clock_t cpu1 = std::clock();
    auto tRun1 = Clock::now();
    uint64_t events = Simulator::GetEventCount();
    double runWall = Secs(tRun0, tRun1);
    double setupWall = Secs(tSetup0, tRun0);

    const double capBps = DataRate(rate).GetBitRate();
    std::vector<double> rSteady;
    double aggSteady = 0;
    for (uint32_t k = 0; k < nFlows; ++k)
    {
        rSteady.push_back(bins.Rate(k, warmup, simTime) / 1e6);
        aggSteady += rSteady.back();
    }

    Json j;
    j.Obj();
    j.Key("scenario").Str("sqrtn");
    j.Key("ns3_version").Str("3.44");
    j.Key("config").Obj();
    j.Key("nFlows").Int(nFlows);
    j.Key("classes").Int(classes);
    j.Key("simTime_s").Num(simTime);
    j.Key("warmup_s").Num(warmup);
    j.Key("startSpread_s").Num(startSpread);
    j.Key("rtt_min_s").Num(rttMin);
    j.Key("rtt_max_s").Num(rttMax);
    j.Key("bottleneck").Str(rate + "/" + cfg.bottleneckDelay);
    j.Key("access").Str(accessRate);
    j.Key("mtu").Int(mtu);
    j.Key("bottleneck_qdisc").Str("FifoQueueDisc MaxSize=" + queue + " + device TxQueue " +
                                  cfg.bottleneckDevQueue);
    j.Key("seed").Int(seed);
    j.Key("run").Int(run);
    j.EndObj();
    TcpSettingsJson(j);
    j.Key("results").Obj();
    j.Key("agg_goodput_steady_mbps").Num(aggSteady);
    j.Key("bottleneck_link_util_whole").Num(8.0 * ctr.bnTxBytes / (capBps * simTime));
    j.Key("jfi_steady").Num(Jain(rSteady));
    j.Key("bottleneck_drops_pkts").Int(ctr.bnDropPkts);
    j.Key("other_drops").Int(ctr.otherDrops);
    j.Key("bottleneck_tx_frames").Int(ctr.bnTxPkts);
    j.Key("qdisc_peak_pkts").Int(ctr.qdMaxPkts);
    j.Key("flow_rx_bytes").Arr();
    for (uint32_t k = 0; k < nFlows; ++k)
    {
        j.Int(bins.Total(k));
    }
    j.EndArr();
    j.EndObj();
    j.Key("perf").Obj();
    j.Key("events").Int(events);
    j.Key("run_wall_s").Num(runWall);
    // Processor time of the run loop: on a shared machine wall time also counts the time
    // other processes held the core.
    j.Key("run_cpu_s").Num(static_cast<double>(cpu1 - cpu0) / CLOCKS_PER_SEC);
    j.Key("setup_wall_s").Num(setupWall);
    j.Key("events_per_wall_s").Num(events / runWall);
    j.Key("sim_s_per_wall_s").Num(simTime / runWall);
    j.Key("max_rss_kib").Int(MaxRssKiB());
    j.EndObj();
    j.EndObj();

    EnsureDir(outdir);
    WriteFile(outdir + "/summary.json", j.Str() + "\n");
    std::cout << j.Str() << std::endl;
    Simulator::Destroy();
    return 0;
}
