// dctcp.cc - ns-3.44 side of quicksim's DCTCP comparison (issue 36).
//
// Dumbbell: nFlows sender/receiver pairs, access links 1 Gbit/s 0.5 ms, bottleneck 100 Mbit/s
// 5 ms (RTT 12 ms plus serialization), MTU 1500 everywhere. TcpDctcp (RFC 8257; ns-3.44's
// defaults: g = 1/16, initial alpha 1, ECT(0), its own RFC 8257 §3.2 ECE echo) bulk flows
// (BulkSendApplication), SegmentSize 1448, 4 MiB buffers, ns-3's other TCP defaults (SACK,
// timestamps, PRR, DelAckCount 2, InitialCwnd 10).
//
// The bottleneck's queue disc is a step marker: RED on the instantaneous queue (QW = 1), not
// gentle, MaxTh = K and MinTh = K - 0.5 (no integer length falls between them; quicksim's RED
// wants MinTh < MaxTh), UseEcn, UseHardDrop false: every arrival that finds K or more packets
// queued is CE-marked (ns-3's dctcp-example marks the same way with its own thresholds). A
// 1-packet device TxQueue under it (ns-3's minimum).
//
// Measured over [warmup, simTime]: each flow's goodput (PacketSink bytes), the queue disc's
// length sampled every `sample` seconds (mean, standard deviation, percentiles, min, max) and
// the same with the device queue's packet added, marks and drops. One JSON line on stdout.
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <vector>

using namespace ns3;

namespace
{
struct Stats
{
    double warmup = 5;
    std::vector<uint32_t> q;    // queue disc packets
    std::vector<uint32_t> qDev; // queue disc + device queue packets
    uint64_t marks = 0;
    uint64_t drops = 0;
};

void
Sample(Stats* s, Ptr<QueueDisc> qd, Ptr<Queue<Packet>> dev, Time every)
{
    if (Simulator::Now().GetSeconds() >= s->warmup)
    {
        s->q.push_back(qd->GetNPackets());
        s->qDev.push_back(qd->GetNPackets() + dev->GetNPackets());
    }
    Simulator::Schedule(every, &Sample, s, qd, dev, every);
}

void
OnMark(Stats* s, Ptr<const QueueDiscItem>, const char*)
{
    if (Simulator::Now().GetSeconds() >= s->warmup)
    {
        s->marks++;
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

/// `--trace=PREFIX`: every flow's window (PREFIX-cwnd.csv: t_s, flow, cwnd_bytes, ssthresh_bytes
/// on every change; PREFIX-alpha.csv: t_s, flow, alpha on every update) and the queue
/// (PREFIX-queue.csv: every sample), to set the sawtooth beside quicksim's `conn` table.
struct Trace
{
    std::ofstream cwnd, alpha, queue;
};

struct FlowTrace
{
    Trace* t;
    uint32_t flow;
    uint32_t cwnd = 0;
    uint32_t ssthresh = 0;
    uint32_t inflight = 0;
    int state = 0; // TcpSocketState::TcpCongState_t: 0 Open, 3 Recovery, 2 CWR
};

void
WriteCwnd(FlowTrace* f)
{
    f->t->cwnd << Simulator::Now().GetSeconds() << "," << f->flow << "," << f->cwnd << ","
               << f->ssthresh << "," << f->inflight << "," << f->state << "\n";
}

void
OnCwnd(FlowTrace* f, uint32_t, uint32_t now)
{
    f->cwnd = now;
    WriteCwnd(f);
}

void
OnSsthresh(FlowTrace* f, uint32_t, uint32_t now)
{
    f->ssthresh = now;
    WriteCwnd(f);
}

void
OnInflight(FlowTrace* f, uint32_t, uint32_t now)
{
    f->inflight = now;
    WriteCwnd(f);
}

void
OnState(FlowTrace* f, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    f->state = now;
    WriteCwnd(f);
}

void
OnAlpha(FlowTrace* f, uint32_t, uint32_t, double alpha)
{
    f->t->alpha << Simulator::Now().GetSeconds() << "," << f->flow << "," << alpha << "\n";
}

void
ConnectTraces(FlowTrace* f, uint32_t node)
{
    std::string base = "/NodeList/" + std::to_string(node) + "/$ns3::TcpL4Protocol/SocketList/0/";
    Config::ConnectWithoutContext(base + "CongestionWindow", MakeBoundCallback(&OnCwnd, f));
    Config::ConnectWithoutContext(base + "SlowStartThreshold", MakeBoundCallback(&OnSsthresh, f));
    Config::ConnectWithoutContext(base + "BytesInFlight", MakeBoundCallback(&OnInflight, f));
    Config::ConnectWithoutContext(base + "CongState", MakeBoundCallback(&OnState, f));
    Config::ConnectWithoutContext(base + "CongestionOps/$ns3::TcpDctcp/CongestionEstimate",
                                  MakeBoundCallback(&OnAlpha, f));
}

void
SampleTrace(Trace* t, Ptr<QueueDisc> qd, Ptr<Queue<Packet>> dev, Time every)
{
    t->queue << Simulator::Now().GetSeconds() << "," << qd->GetNPackets() << ","
             << dev->GetNPackets() << "\n";
    Simulator::Schedule(every, &SampleTrace, t, qd, dev, every);
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

/// {"mean":..,"std":..,"min":..,"p5":..,"p50":..,"p95":..,"max":..} of `v` (sorted copy).
std::string
Describe(std::vector<uint32_t> v)
{
    std::sort(v.begin(), v.end());
    double sum = 0, sq = 0;
    for (auto x : v)
    {
        sum += x;
        sq += double(x) * x;
    }
    double n = v.size();
    double mean = n ? sum / n : 0;
    auto pct = [&](double p) { return n ? v[std::min<size_t>(v.size() - 1, size_t(p * n))] : 0u; };
    std::ostringstream os;
    os << std::setprecision(10) << "{\"mean\":" << mean
       << ",\"std\":" << (n ? std::sqrt(std::max(0.0, sq / n - mean * mean)) : 0.0)
       << ",\"min\":" << (n ? v.front() : 0) << ",\"p1\":" << pct(0.01) << ",\"p5\":" << pct(0.05)
       << ",\"p50\":" << pct(0.5) << ",\"p95\":" << pct(0.95) << ",\"p99\":" << pct(0.99)
       << ",\"max\":" << (n ? v.back() : 0) << ",\"samples\":" << v.size() << "}";
    return os.str();
}
} // namespace

int
main(int argc, char* argv[])
{
    uint32_t nFlows = 2;
    double simTime = 20;
    double warmup = 5;
    double k = 20;
    double sample = 0.0001;
    std::string rate = "100Mbps";
    std::string delay = "5ms";
    uint32_t seed = 1;
    uint32_t run = 1;
    std::string trace;
    CommandLine cmd(__FILE__);
    cmd.AddValue("flows", "number of bulk DCTCP flows", nFlows);
    cmd.AddValue("simTime", "simulated seconds", simTime);
    cmd.AddValue("warmup", "measurement starts here (s)", warmup);
    cmd.AddValue("k", "marking threshold K (packets)", k);
    cmd.AddValue("rate", "bottleneck rate", rate);
    cmd.AddValue("delay", "bottleneck one-way delay", delay);
    cmd.AddValue("sample", "queue sampling interval (s)", sample);
    cmd.AddValue("seed", "RngSeedManager seed", seed);
    cmd.AddValue("run", "RngSeedManager run", run);
    cmd.AddValue("trace", "write PREFIX-cwnd.csv, -alpha.csv (flow 1) and -queue.csv", trace);
    cmd.Parse(argc, argv);
    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpDctcp::GetTypeId()));
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
    access.SetChannelAttribute("Delay", StringValue("0.5ms"));
    access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("100000p"));
    PointToPointHelper bn;
    bn.SetDeviceAttribute("DataRate", StringValue(rate));
    bn.SetDeviceAttribute("Mtu", UintegerValue(1500));
    bn.SetChannelAttribute("Delay", StringValue(delay));
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
    tch.SetRootQueueDisc("ns3::RedQueueDisc",
                         "MaxSize", StringValue("2666p"),
                         "MinTh", DoubleValue(k - 0.5),
                         "MaxTh", DoubleValue(k),
                         "QW", DoubleValue(1.0),
                         "Gentle", BooleanValue(false),
                         "Wait", BooleanValue(false),
                         "MeanPktSize", UintegerValue(1500),
                         "LinkBandwidth", DataRateValue(DataRate(rate)),
                         "UseHardDrop", BooleanValue(false),
                         "UseEcn", BooleanValue(true));
    QueueDiscContainer qds = tch.Install(bnDev.Get(0));
    Ptr<QueueDisc> qd = qds.Get(0);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    Stats st;
    st.warmup = warmup;
    qd->TraceConnectWithoutContext("Mark", MakeBoundCallback(&OnMark, &st));
    qd->TraceConnectWithoutContext("Drop", MakeBoundCallback(&OnDrop, &st));
    auto fwd = DynamicCast<PointToPointNetDevice>(bnDev.Get(0));
    Simulator::Schedule(Seconds(0), &Sample, &st, qd, fwd->GetQueue(), Seconds(sample));

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
    Trace tr;
    std::vector<FlowTrace> flowTraces;
    flowTraces.reserve(nFlows);
    if (!trace.empty())
    {
        tr.cwnd.open(trace + "-cwnd.csv");
        tr.alpha.open(trace + "-alpha.csv");
        tr.queue.open(trace + "-queue.csv");
        tr.cwnd << std::setprecision(10) << "t_s,flow,cwnd_bytes,ssthresh_bytes,inflight_bytes,state\n";
        tr.alpha << std::setprecision(10) << "t_s,flow,alpha\n";
        tr.queue << std::setprecision(10) << "t_s,disc_packets,device_packets\n";
        // The bulk sender's socket exists once its application has started (at 0 s).
        for (uint32_t i = 0; i < nFlows; ++i)
        {
            flowTraces.push_back({&tr, i + 1});
        }
        for (uint32_t i = 0; i < nFlows; ++i)
        {
            Simulator::Schedule(MilliSeconds(1), &ConnectTraces, &flowTraces[i], senders.Get(i)->GetId());
        }
        Simulator::Schedule(Seconds(0), &SampleTrace, &tr, qd, fwd->GetQueue(), Seconds(sample));
    }
    Simulator::Stop(Seconds(simTime));
    Simulator::Run();

    double window = simTime - warmup;
    std::ostringstream os;
    os << std::setprecision(10) << "{\"cc\":\"dctcp\",\"flows\":" << nFlows << ",\"rate\":\"" << rate
       << "\",\"delay\":\"" << delay << "\",\"k\":" << k << ",\"sim_time_s\":" << simTime
       << ",\"warmup_s\":" << warmup << ",\"run\":" << run << ",\"marks\":" << st.marks
       << ",\"drops\":" << st.drops << ",\"queue\":" << Describe(st.q)
       << ",\"queue_with_device\":" << Describe(st.qDev) << ",\"goodput_bps\":[";
    for (size_t i = 0; i < sinks.size(); ++i)
    {
        os << (i ? "," : "") << (sinks[i].app->GetTotalRx() - sinks[i].atWarmup) * 8.0 / window;
    }
    os << "]}";
    std::cout << os.str() << std::endl;
    Simulator::Destroy();
    return 0;
}
