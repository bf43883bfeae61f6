// aqm.cc - ns-3.44 side of quicksim's queue-discipline comparison (issue 16).
//
// Dumbbell: nFlows sender/receiver pairs, access links 1 Gbit/s 1 ms, bottleneck 10 Mbit/s
// 48 ms (RTT 100 ms), MTU 1500 everywhere. One queue disc on the bottleneck's data direction
// (--qdisc=red|codel|fq_codel|pie) with the parameters of quicksim's `scenarios/aqm-ns3-*.toml`;
// a 1-packet device TxQueue under it (ns-3's minimum; see the report for what that adds).
// TCP NewReno (or, --cc=cubic, TcpCubic) bulk flows (BulkSendApplication), SegmentSize 1448, 4 MiB buffers, ns-3.44's
// other TCP defaults (SACK, timestamps, PRR, DelAckCount 2, MinRto 1 s, InitialCwnd 10).
//
// Measured over [warmup, simTime]: the mean sojourn time of the packets the queue disc
// dequeued (its SojournTime trace), the mean wait of the packets in the device TxQueue under it
// (from its Enqueue/Dequeue traces, by packet uid: the time a packet waits for the one being
// serialized, which quicksim's queue counts as queueing), the bottleneck's utilization (frames sent incl. the 2-B PPP
// header over rate x window), drops, and each flow's goodput (PacketSink bytes).
// Output: one JSON line on stdout.
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <iomanip>
#include <iostream>
#include <map>
#include <vector>

using namespace ns3;

namespace
{
struct Stats
{
    double warmup = 20;
    double sojournSum = 0;
    uint64_t sojournN = 0;
    uint64_t txBytes = 0;
    uint64_t drops = 0;
    // The device TxQueue under the queue disc: enqueue time by packet uid, and the waits.
    std::map<uint64_t, Time> devIn;
    double devSum = 0;
    uint64_t devN = 0;
};

void
OnDevEnqueue(Stats* s, Ptr<const Packet> p)
{
    s->devIn[p->GetUid()] = Simulator::Now();
}

void
OnDevDequeue(Stats* s, Ptr<const Packet> p)
{
    auto it = s->devIn.find(p->GetUid());
    if (it == s->devIn.end())
    {
        return;
    }
    if (Simulator::Now().GetSeconds() >= s->warmup)
    {
        s->devSum += (Simulator::Now() - it->second).GetSeconds();
        s->devN++;
    }
    s->devIn.erase(it);
}

void
OnSojourn(Stats* s, Time t)
{
    if (Simulator::Now().GetSeconds() >= s->warmup)
    {
        s->sojournSum += t.GetSeconds();
        s->sojournN++;
    }
}

void
OnTx(Stats* s, Ptr<const Packet> p)
{
    if (Simulator::Now().GetSeconds() >= s->warmup)
    {
        s->txBytes += p->GetSize();
    }
}

void
OnDrop(Stats* s, Ptr<const QueueDiscItem>)
{
    if (Simulator::Now().GetSeconds() >= s->warmup)
    {
        s->drops++;
    }
}

struct Sink
{
    Ptr<PacketSink> app;
    uint64_t atWarmup = 0;
};

void
Snapshot(std::vector<Sink>* sinks)
{
    for (auto& s : *sinks)
    {
        s.atWarmup = s.app->GetTotalRx();
    }
}
} // namespace

int
main(int argc, char* argv[])
{
    std::string qdisc = "codel";
    uint32_t nFlows = 4;
    double simTime = 60;
    double warmup = 20;
    uint32_t seed = 1;
    uint32_t run = 1;
    std::string cc = "newreno";
    CommandLine cmd(__FILE__);
    cmd.AddValue("qdisc", "red, codel, fq_codel or pie", qdisc);
    cmd.AddValue("flows", "number of bulk TCP flows", nFlows);
    cmd.AddValue("simTime", "simulated seconds", simTime);
    cmd.AddValue("warmup", "measurement starts here (s)", warmup);
    cmd.AddValue("seed", "RngSeedManager seed", seed);
    cmd.AddValue("run", "RngSeedManager run", run);
    cmd.AddValue("cc", "newreno or cubic (ns-3.44's TcpCubic, its defaults: HyStart on)", cc);
    cmd.Parse(argc, argv);
    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);

    if (cc != "newreno" && cc != "cubic")
    {
        std::cerr << "aqm: --cc must be newreno or cubic, not " << cc << "\n";
        return 2;
    }
    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(cc == "cubic" ? TcpCubic::GetTypeId() : TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 << 20));

    NodeContainer senders, receivers, routers;
    senders.Create(nFlows);
    receivers.Create(nFlows);
    routers.Create(2);
    InternetStackHelper stack;
    stack.InstallAll();

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue("1Gbps"));
    access.SetDeviceAttribute("Mtu", UintegerValue(1500));
    access.SetChannelAttribute("Delay", StringValue("1ms"));
    access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("100000p"));
    PointToPointHelper bn;
    bn.SetDeviceAttribute("DataRate", StringValue("10Mbps"));
    bn.SetDeviceAttribute("Mtu", UintegerValue(1500));
    bn.SetChannelAttribute("Delay", StringValue("48ms"));
    bn.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));

    Ipv4AddressHelper addr("10.0.0.0", "255.255.255.252");
    NetDeviceContainer all;
    NetDeviceContainer bnDev = bn.Install(routers.Get(0), routers.Get(1));
    addr.Assign(bnDev);
    addr.NewNetwork();
    all.Add(bnDev);
    std::vector<Ipv4Address> rxAddr;
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        NetDeviceContainer s = access.Install(senders.Get(i), routers.Get(0));
        addr.Assign(s);
        addr.NewNetwork();
        all.Add(s);
        NetDeviceContainer r = access.Install(receivers.Get(i), routers.Get(1));
        rxAddr.push_back(addr.Assign(r).GetAddress(0));
        addr.NewNetwork();
        all.Add(r);
    }
    TrafficControlHelper none;
    none.Uninstall(all);

    TrafficControlHelper tch;
    if (qdisc == "codel")
    {
        tch.SetRootQueueDisc("ns3::CoDelQueueDisc",
                             "MaxSize", StringValue("1000p"),
                             "Target", StringValue("5ms"),
                             "Interval", StringValue("100ms"),
                             "MinBytes", UintegerValue(1500),
                             "UseEcn", BooleanValue(false));
    }
    else if (qdisc == "fq_codel")
    {
        tch.SetRootQueueDisc("ns3::FqCoDelQueueDisc",
                             "MaxSize", StringValue("10240p"),
                             "Flows", UintegerValue(1024),
                             "DropBatchSize", UintegerValue(64),
                             "Target", StringValue("5ms"),
                             "Interval", StringValue("100ms"),
                             "UseEcn", BooleanValue(false));
    }
    else if (qdisc == "pie")
    {
        tch.SetRootQueueDisc("ns3::PieQueueDisc",
                             "MaxSize", StringValue("1000p"),
                             "QueueDelayReference", TimeValue(MilliSeconds(15)),
                             "Tupdate", TimeValue(MilliSeconds(15)),
                             "A", DoubleValue(0.125),
                             "B", DoubleValue(1.25),
                             "MaxBurstAllowance", TimeValue(MilliSeconds(150)),
                             "MeanPktSize", UintegerValue(1500),
                             "UseDequeueRateEstimator", BooleanValue(false),
                             "UseDerandomization", BooleanValue(false),
                             "UseEcn", BooleanValue(false));
    }
    else if (qdisc == "red")
    {
        tch.SetRootQueueDisc("ns3::RedQueueDisc",
                             "MaxSize", StringValue("1000p"),
                             "MinTh", DoubleValue(20),
                             "MaxTh", DoubleValue(60),
                             "QW", DoubleValue(0.002),
                             "LInterm", DoubleValue(50),
                             "Gentle", BooleanValue(true),
                             "Wait", BooleanValue(false),
                             "MeanPktSize", UintegerValue(500),
                             "LinkBandwidth", DataRateValue(DataRate("10Mbps")),
                             "UseHardDrop", BooleanValue(true),
                             "UseEcn", BooleanValue(false));
    }
    else
    {
        std::cerr << "aqm: --qdisc must be red, codel, fq_codel or pie, not " << qdisc << "\n";
        return 2;
    }
    QueueDiscContainer qds = tch.Install(bnDev.Get(0));
    Ptr<QueueDisc> qd = qds.Get(0);
    if (auto fq = DynamicCast<FqCoDelQueueDisc>(qd))
    {
        fq->SetQuantum(1514); // a method, not an attribute, in ns-3.44
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    Stats st;
    st.warmup = warmup;
    qd->TraceConnectWithoutContext("SojournTime", MakeBoundCallback(&OnSojourn, &st));
    qd->TraceConnectWithoutContext("Drop", MakeBoundCallback(&OnDrop, &st));
    auto fwd = DynamicCast<PointToPointNetDevice>(bnDev.Get(0));
    fwd->TraceConnectWithoutContext("PhyTxEnd", MakeBoundCallback(&OnTx, &st));
    fwd->GetQueue()->TraceConnectWithoutContext("Enqueue", MakeBoundCallback(&OnDevEnqueue, &st));
    fwd->GetQueue()->TraceConnectWithoutContext("Dequeue", MakeBoundCallback(&OnDevDequeue, &st));

    std::vector<Sink> sinks;
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        uint16_t port = 5000 + i;
        PacketSinkHelper sh("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sa = sh.Install(receivers.Get(i));
        sa.Start(Seconds(0));
        sinks.push_back({DynamicCast<PacketSink>(sa.Get(0)), 0});
        BulkSendHelper bs("ns3::TcpSocketFactory", InetSocketAddress(rxAddr[i], port));
        bs.SetAttribute("MaxBytes", UintegerValue(0));
        ApplicationContainer ba = bs.Install(senders.Get(i));
        ba.Start(Seconds(0));
    }
    Simulator::Schedule(Seconds(warmup), &Snapshot, &sinks);
    Simulator::Stop(Seconds(simTime));
    Simulator::Run();

    double window = simTime - warmup;
    std::ostringstream os;
    os << std::setprecision(10) << "{\"qdisc\":\"" << qdisc << "\",\"cc\":\"" << cc
       << "\",\"flows\":" << nFlows
       << ",\"sim_time_s\":" << simTime << ",\"warmup_s\":" << warmup << ",\"run\":" << run
       << ",\"mean_sojourn_s\":" << (st.sojournN ? st.sojournSum / st.sojournN : 0.0)
       << ",\"dequeued\":" << st.sojournN
       << ",\"mean_device_wait_s\":" << (st.devN ? st.devSum / st.devN : 0.0)
       << ",\"utilization\":" << st.txBytes * 8.0 / (10e6 * window) << ",\"drops\":" << st.drops
       << ",\"goodput_bps\":[";
    for (size_t i = 0; i < sinks.size(); ++i)
    {
        os << (i ? "," : "") << (sinks[i].app->GetTotalRx() - sinks[i].atWarmup) * 8.0 / window;
    }
    os << "]}";
    std::cout << os.str() << std::endl;
    Simulator::Destroy();
    return 0;
}
