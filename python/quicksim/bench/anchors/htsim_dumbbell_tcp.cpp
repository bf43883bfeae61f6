// quicksim's htsim harness: long-lived TCP flows over one DropTail bottleneck, built against
// htsim's sources (github Broadcom/csg-htsim, sim/) by `quicksim bench --vs-htsim`
// (`quicksim._htsim`).
//
// The topology is the bench's dumbbell, link for link: flow i's data leaves its sender through
// its access link (a Queue at the same rate with a buffer that never fills; no Pipe: the access
// links have no delay), crosses the shared bottleneck (a DropTail Queue of --queue-bytes and a
// Pipe of the one-way delay) and the receiver's access link (a Queue), and reaches its TcpSink;
// ACKs come back the same way (receiver access Queue, the reverse bottleneck Queue and Pipe,
// the sender's access Queue). Every link direction is a Queue (serialization) and, where it has
// a delay, a Pipe: 4 events per data packet and 4 per ACK, as quicksim's hops. Flows start
// --start-step-ms apart (as ns-3's scale.cc and the bench). htsim's 10 ms retransmit-timer
// scanner runs; nothing is logged but htsim's own line per retransmit timeout (TcpSrc's
// rtx_timer_hook prints it). The run loop is timed alone (setup excluded), and the program prints one JSON line
// last: run-loop wall and processor time, events, packets served by the bottleneck, delivered
// bytes (in all and per flow), peak memory.
//
// Spread RTTs (the long flows of `quicksim reproduce buffer-sizing-sqrt-n`): with
// --rtt-classes=K the flows' two-way propagation delays are K equal-width classes over
// [--rtt-min-ms, --rtt-max-ms] at their midpoints, flow k in class k / (flows / K) (each class
// one sender host in quicksim's scenario), and each sender's access link gets a Pipe of
// RTT / 2 - --delay-ms in both directions, the rest of its class's RTT. --access-mbps sets the
// access links' rate (default: the bottleneck's). --start-spread-s=S starts each flow at a
// time uniform over [0, S] (std::mt19937_64, seed 1) instead of --start-step-ms apart.
// --initial-ssthresh-pkts=N sets every TcpSrc's initial ssthresh to N packets (default 100,
// TcpSrc's own); "inf" is RFC 5681 3.1's arbitrarily high one, quicksim's.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "config.h"
#include "eventlist.h"
#include "network.h"
#include "pipe.h"
#include "queue.h"
#include "tcp.h"

namespace {

// A DropTail queue that counts the packets it has served.
class CountingQueue : public Queue {
public:
    CountingQueue(linkspeed_bps rate, mem_b size, EventList& ev) : Queue(rate, size, ev, nullptr) {}
    void completeService() override {
        ++served;
        Queue::completeService();
    }
    uint64_t served = 0;
};

long peak_rss_kb() {
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line)) {
        if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
    }
    return -1;
}

// The value of `--name=V` or `--name V`; `dflt` when absent. An unknown option or a value that
// is not a number stops the program with a message (so a typo cannot run the default silently).
double arg(int argc, char** argv, const char* name, double dflt) {
    const size_t n = std::strlen(name);
    for (int i = 1; i < argc; ++i) {
        const char* v = nullptr;
        if (!std::strncmp(argv[i], name, n) && argv[i][n] == '=') v = argv[i] + n + 1;
        else if (!std::strcmp(argv[i], name) && i + 1 < argc) v = argv[i + 1];
        if (v) {
            char* end = nullptr;
            const double x = std::strtod(v, &end);
            if (end == v || *end) {
                std::fprintf(stderr, "htsim_dumbbell_tcp: %s: not a number: %s\n", name, v);
                std::exit(2);
            }
            return x;
        }
    }
    return dflt;
}

void check_options(int argc, char** argv) {
    static const char* known[] = {"--flows",       "--rate-mbps",      "--delay-ms",
                                  "--queue-bytes", "--packet-bytes",   "--duration-s",
                                  "--start-step-ms", "--start-spread-s", "--access-mbps",
                                  "--rtt-classes", "--rtt-min-ms",     "--rtt-max-ms",
                                  "--initial-ssthresh-pkts"};
    for (int i = 1; i < argc; ++i) {
        if (std::strncmp(argv[i], "--", 2)) continue;  // a value of the option before
        bool ok = false;
        for (const char* k : known) {
            const size_t n = std::strlen(k);
            ok = ok || (!std::strncmp(argv[i], k, n) && (argv[i][n] == '=' || argv[i][n] == 0));
        }
        if (!ok) {
            std::fprintf(stderr, "htsim_dumbbell_tcp: unknown option %s\n", argv[i]);
            std::exit(2);
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    check_options(argc, argv);
    const int flows = static_cast<int>(arg(argc, argv, "--flows", 3));
    const double rate_mbps = arg(argc, argv, "--rate-mbps", 10);
    const double delay_ms = arg(argc, argv, "--delay-ms", 10);
    const double queue_bytes = arg(argc, argv, "--queue-bytes", 25000);
    const int packet = static_cast<int>(arg(argc, argv, "--packet-bytes", 1500));
    const double duration_s = arg(argc, argv, "--duration-s", 50);
    const double step_ms = arg(argc, argv, "--start-step-ms", 1);
    const double spread_s = arg(argc, argv, "--start-spread-s", 0);
    const double access_mbps = arg(argc, argv, "--access-mbps", rate_mbps);
    const int classes = static_cast<int>(arg(argc, argv, "--rtt-classes", 0));
    const double rtt_min_ms = arg(argc, argv, "--rtt-min-ms", 2 * delay_ms);
    const double rtt_max_ms = arg(argc, argv, "--rtt-max-ms", 2 * delay_ms);
    // TcpSrc's own initial ssthresh is 100 packets; "inf" gives RFC 5681 3.1's "arbitrarily
    // high" one (quicksim's), the largest TcpSrc holds (a uint32_t of bytes).
    const double ssthresh_pkts = arg(argc, argv, "--initial-ssthresh-pkts", 100);
    if (!(ssthresh_pkts >= 1)) {
        std::fprintf(stderr, "htsim_dumbbell_tcp: --initial-ssthresh-pkts=%g is below 1\n", ssthresh_pkts);
        std::exit(2);
    }
    const uint32_t ssthresh = ssthresh_pkts * packet >= 0xffffffffu
                                  ? 0xffffffffu
                                  : static_cast<uint32_t>(ssthresh_pkts * packet);
    if (classes < 0 || (classes > 0 && flows % classes != 0)) {
        std::fprintf(stderr, "htsim_dumbbell_tcp: --flows=%d is not a multiple of --rtt-classes=%d\n",
                     flows, classes);
        std::exit(2);
    }
    if (classes > 0 && rtt_min_ms < 2 * delay_ms) {
        std::fprintf(stderr, "htsim_dumbbell_tcp: --rtt-min-ms=%g is below twice --delay-ms=%g\n",
                     rtt_min_ms, delay_ms);
        std::exit(2);
    }
    std::mt19937_64 rng(1);
    std::uniform_real_distribution<double> uniform(0.0, spread_s);

    EventList eventlist;
    eventlist.setEndtime(timeFromSec(duration_s));
    Packet::set_packet_size(packet);
    const linkspeed_bps rate = static_cast<linkspeed_bps>(rate_mbps * 1e6);
    const linkspeed_bps access_rate = static_cast<linkspeed_bps>(access_mbps * 1e6);

    CountingQueue bottleneck(rate, static_cast<mem_b>(queue_bytes), eventlist);
    bottleneck.setName("bottleneck");
    Pipe fwd(timeFromMs(delay_ms), eventlist);
    fwd.setName("fwd");
    Queue bottleneck_rev(rate, memFromPkt(1e6), eventlist, nullptr);
    bottleneck_rev.setName("bottleneck-rev");
    Pipe rev(timeFromMs(delay_ms), eventlist);
    rev.setName("rev");
    TcpRtxTimerScanner scanner(timeFromMs(10), eventlist);

    std::vector<TcpSrc*> srcs;
    std::vector<TcpSink*> sinks;
    for (int i = 0; i < flows; ++i) {
        auto* src = new TcpSrc(nullptr, nullptr, eventlist);
        auto* sink = new TcpSink();
        src->setName("tcp" + std::to_string(i));
        sink->setName("sink" + std::to_string(i));
        scanner.registerTcp(*src);
        src->set_ssthresh(ssthresh);
        // The four access-link directions of this pair: sender out/in, receiver in/out.
        Queue* acc[4];
        for (int k = 0; k < 4; ++k) {
            acc[k] = new Queue(access_rate, memFromPkt(1e6), eventlist, nullptr);
            acc[k]->setName("access" + std::to_string(i) + "." + std::to_string(k));
        }
        // The sender's access link delay of this flow's RTT class, one Pipe per direction.
        Pipe* acc_pipe[2] = {nullptr, nullptr};
        if (classes > 0) {
            const int c = i / (flows / classes);
            const double rtt_ms = rtt_min_ms + (rtt_max_ms - rtt_min_ms) * (c + 0.5) / classes;
            const simtime_picosec d = timeFromUs((rtt_ms / 2 - delay_ms) * 1e3);
            for (int k = 0; k < 2; ++k) {
                acc_pipe[k] = new Pipe(d, eventlist);
                acc_pipe[k]->setName("access-pipe" + std::to_string(i) + "." + std::to_string(k));
            }
        }
        auto* out = new Route();
        out->push_back(acc[0]);
        if (acc_pipe[0]) out->push_back(acc_pipe[0]);
        out->push_back(&bottleneck);
        out->push_back(&fwd);
        out->push_back(acc[2]);
        out->push_back(sink);
        auto* back = new Route();
        back->push_back(acc[3]);
        back->push_back(&bottleneck_rev);
        back->push_back(&rev);
        back->push_back(acc[1]);
        if (acc_pipe[1]) back->push_back(acc_pipe[1]);
        back->push_back(src);
        const simtime_picosec start = spread_s > 0 ? timeFromSec(uniform(rng)) : timeFromMs(i * step_ms);
        src->connect(*out, *back, *sink, start);
        srcs.push_back(src);
        sinks.push_back(sink);
    }

    uint64_t events = 0;
    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t cpu0 = std::clock();
    while (eventlist.doNextEvent()) ++events;
    const double cpu = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    // Each flow's bytes acknowledged (its share of the bottleneck), then their sum.
    uint64_t delivered = 0;
    std::string per_flow;
    for (auto* s : sinks) {
        delivered += s->cumulative_ack();
        per_flow += (per_flow.empty() ? "" : ", ") + std::to_string(s->cumulative_ack());
    }
    std::printf(
        "{\"program\": \"htsim-dumbbell-tcp\", \"flows\": %d, \"run_wall_s\": %.6f, \"run_cpu_s\": %.6f, "
        "\"events\": %llu, "
        "\"bottleneck_packets\": %llu, \"bottleneck_drops\": %d, \"delivered_bytes\": %llu, "
        "\"flow_delivered_bytes\": [%s], \"packet_bytes\": %d, \"peak_rss_kb\": %ld}\n",
        flows, wall, cpu, static_cast<unsigned long long>(events),
        static_cast<unsigned long long>(bottleneck.served), bottleneck.num_drops(),
        static_cast<unsigned long long>(delivered), per_flow.c_str(), packet, peak_rss_kb());
    return 0;
}
