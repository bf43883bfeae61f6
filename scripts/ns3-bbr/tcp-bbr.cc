// ns-3.44's BBR validation scenario (examples/tcp/tcp-bbr-example.cc) as a measurement for
// `quicksim reproduce bbr`: sender -1 Gbit/s, 5 ms- R1 -10 Mbit/s, 10 ms, FIFO 100 packets
// (+ a 1-packet device queue)- R2 -1 Gbit/s, 5 ms- receiver, one BulkSend TCP flow from
// 0.1 s, SegmentSize 1448, InitialCwnd 10, DelAckCount 2, 4 MiB / 6 MiB buffers, as the
// example. Printed instead of the example's files: one CSV row per 0.1 s with the sender's
// congestion window (bytes, last value), the bytes the sink received in that interval and
// the bottleneck queue length (packets).
//
// Build and run: scripts/ns3-bbr/run.sh (needs `pip install ns3==3.44.post0`).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <iostream>

using namespace ns3;

static uint32_t g_cwnd = 0;
static uint64_t g_prevRx = 0;

static void
OnCwnd(uint32_t, uint32_t newval)
{
    g_cwnd = newval;
}

static void
HookCwnd()
{
    Config::ConnectWithoutContext("/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/CongestionWindow",
                                  MakeCallback(&OnCwnd));
}

static void
Sample(Ptr<PacketSink> sink, Ptr<QueueDisc> qd, Time step)
{
    uint64_t rx = sink->GetTotalRx();
    std::cout << Simulator::Now().GetSeconds() << "," << g_cwnd << "," << (rx - g_prevRx) << ","
              << qd->GetCurrentSize().GetValue() << "\n";
    g_prevRx = rx;
    Simulator::Schedule(step, &Sample, sink, qd, step);
}

int
main(int argc, char* argv[])
{
    std::string tcp = "TcpBbr";
    double stop = 30.0;
    CommandLine cmd(__FILE__);
    cmd.AddValue("tcp", "TcpBbr or TcpNewReno", tcp);
    cmd.AddValue("stop", "seconds simulated", stop);
    cmd.Parse(argc, argv);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue("ns3::" + tcp));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4194304));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(6291456));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::DropTailQueue<Packet>::MaxSize", QueueSizeValue(QueueSize("1p")));
    Config::SetDefault("ns3::FifoQueueDisc::MaxSize", QueueSizeValue(QueueSize("100p")));

    NodeContainer nodes;
    nodes.Create(4); // 0 sender, 1 R1, 2 R2, 3 receiver
    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue("10Mbps"));
    bottleneck.SetChannelAttribute("Delay", StringValue("10ms"));
    PointToPointHelper edge;
    edge.SetDeviceAttribute("DataRate", StringValue("1000Mbps"));
    edge.SetChannelAttribute("Delay", StringValue("5ms"));
    NetDeviceContainer senderEdge = edge.Install(nodes.Get(0), nodes.Get(1));
    NetDeviceContainer r1r2 = bottleneck.Install(nodes.Get(1), nodes.Get(2));
    NetDeviceContainer receiverEdge = edge.Install(nodes.Get(2), nodes.Get(3));

    InternetStackHelper internet;
    internet.InstallAll();
    TrafficControlHelper tch;
    tch.SetRootQueueDisc("ns3::FifoQueueDisc");
    tch.SetQueueLimits("ns3::DynamicQueueLimits", "HoldTime", StringValue("1000ms"));
    tch.Install(senderEdge);
    tch.Install(receiverEdge);
    QueueDiscContainer qd = tch.Install(r1r2.Get(0));
    tch.Install(r1r2.Get(1));

    Ipv4AddressHelper ipv4;
    ipv4.SetBase("10.0.0.0", "255.255.255.0");
    ipv4.Assign(r1r2);
    ipv4.NewNetwork();
    ipv4.Assign(senderEdge);
    ipv4.NewNetwork();
    Ipv4InterfaceContainer ir = ipv4.Assign(receiverEdge);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    uint16_t port = 50001;
    BulkSendHelper source("ns3::TcpSocketFactory", InetSocketAddress(ir.GetAddress(1), port));
    source.SetAttribute("MaxBytes", UintegerValue(0));
    ApplicationContainer src = source.Install(nodes.Get(0));
    src.Start(Seconds(0.1));
    src.Stop(Seconds(stop));
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sinkApp = sinkHelper.Install(nodes.Get(3));
    sinkApp.Start(Seconds(0));
    sinkApp.Stop(Seconds(stop));

    Simulator::Schedule(Seconds(0.1) + MilliSeconds(1), &HookCwnd);
    std::cout << "t_s,cwnd_bytes,rx_bytes,queue_packets\n";
    Time step = MilliSeconds(100);
    Simulator::Schedule(step, &Sample, DynamicCast<PacketSink>(sinkApp.Get(0)), qd.Get(0), step);
    Simulator::Stop(Seconds(stop) + TimeStep(1));
    Simulator::Run();
    Simulator::Destroy();
    return 0;
}
