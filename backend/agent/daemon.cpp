#include "backend/agent/daemon.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "backend/agent/agent_service.h"
#include "backend/agent/auth.h"
#include "backend/agent/collector.h"
#include "backend/agent/daemon_config.h"
#include "backend/agent/metrics_http.h"
#include "backend/agent/metrics_web_config.h"
#include "backend/agent/node_info.h"
#include "backend/agent/privileges.h"
#include "backend/agent/prometheus_exposition.h"
#include "backend/agent/run_manager.h"
#include "backend/agent/spool.h"
#include "backend/agent/startup_pages.h"
#include "backend/agent/stream_pump.h"
#include "backend/agent/tls_floor.h"
#include "backend/agent/work_pool.h"
#include "backend/agent/workdir.h"
#include "common/credential_file.h"

namespace runplane::agent {
namespace {

std::string selfDir() {
    char buf[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    if (n <= 0) {
        return ".";
    }
    std::string path(buf, static_cast<std::size_t>(n));
    return path.substr(0, path.rfind('/'));
}

Result<std::string> readFile(const std::string& path, const std::string& flag) {
    // Regular files only, size-capped, never blocking on a FIFO (common/credential_file.h).
    return readCredentialFile(path, kPemFileMaxBytes, flag);
}

// gRPC only says "cannot listen" for an unusable certificate or key; name the file and the
// problem before it gets that far (the common one: the two flags swapped).
Status checkPem(const std::string& text, const std::string& path, bool wantKey) {
    const bool hasCert = text.find("-----BEGIN CERTIFICATE-----") != std::string::npos;
    const bool hasKey = text.find("PRIVATE KEY-----") != std::string::npos;
    const std::string flag = wantKey ? "--tls-key " : "--tls-cert ";
    if (wantKey && !hasKey) {
        return Error{flag + path + ": no PEM private key in it" +
                     (hasCert ? " but a certificate (were --tls-cert and --tls-key swapped?)"
                              : " (expected -----BEGIN ... PRIVATE KEY-----)")};
    }
    if (!wantKey && !hasCert) {
        return Error{flag + path + ": no PEM certificate in it" +
                     (hasKey ? " but a private key (were --tls-cert and --tls-key swapped?)"
                             : " (expected -----BEGIN CERTIFICATE-----)")};
    }
    return {};
}

int fail(const std::string& message) {
    std::fprintf(stderr, "runplaned: %s\n", message.c_str());
    return 2;
}

}  // namespace

int daemonMain(int argc, char** argv) {
    // Block the shutdown signals before any thread exists; the main thread waits for them.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGHUP);
    ::pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    ::signal(SIGPIPE, SIG_IGN);
    // One malloc arena instead of one per thread (glibc's default allows 8 per core): the
    // daemon's ~16 threads (gRPC's pollers and executors, the collector, the pump) allocate
    // little and rarely, so sharing costs no measurable time, and each extra arena keeps its own
    // touched heap pages (-0.4 to -0.6 MB resident under load, docs/performance.md).
    // MALLOC_ARENA_MAX in the environment still decides.
    if (std::getenv("MALLOC_ARENA_MAX") == nullptr) {
        ::mallopt(M_ARENA_MAX, 1);
    }

    bool help = false;
    auto parsed = parseDaemonArgs(argc, argv, &help);
    if (!parsed) {
        if (help) {
            std::fputs(parsed.error().c_str(), stdout);
            return 0;
        }
        return fail(parsed.error());
    }
    DaemonConfig config = std::move(*parsed);
    if (Status s = checkSecurity(config); !s.ok()) {
        return fail(s.error());
    }
    StderrLogger logger(*parseLogLevel(config.logLevel), *parseLogFormat(config.logFormat));

    // Every credential is read now, while the daemon may still be root and able to read them.
    std::optional<std::string> token;
    if (!config.tokenFile.empty()) {
        auto t = readTokenFile(config.tokenFile);
        if (!t) {
            return fail(t.error());
        }
        token = *t;
    }
    std::string tlsCertPem, tlsKeyPem, tlsClientCaPem;
    if (!config.tlsCert.empty()) {
        auto cert = readFile(config.tlsCert, "--tls-cert");
        auto key = readFile(config.tlsKey, "--tls-key");
        if (!cert || !key) {
            return fail(!cert ? cert.error() : key.error());
        }
        for (Status s :
             {checkPem(*cert, config.tlsCert, false), checkPem(*key, config.tlsKey, true)}) {
            if (!s.ok()) {
                return fail(s.error());
            }
        }
        tlsCertPem = std::move(*cert);
        tlsKeyPem = std::move(*key);
        if (!config.tlsClientCa.empty()) {
            auto ca = readFile(config.tlsClientCa, "--tls-client-ca");
            if (!ca) {
                return fail(ca.error());
            }
            tlsClientCaPem = std::move(*ca);
        }
    }
    MetricsWebConfig metricsWeb;
    if (!config.metricsWebConfig.empty()) {
        auto web = loadMetricsWebConfig(config.metricsWebConfig);
        if (!web) {
            return fail(web.error());
        }
        auto mp = parseHostPort(config.metricsListen, "--metrics-listen");
        if (!isLoopbackHost(mp->host) && (!web->tls() || !web->authenticates())) {
            return fail("--metrics-listen " + config.metricsListen +
                        " is not a loopback address: " + config.metricsWebConfig +
                        " must give tls_server_config and at least one of basic_auth_users, "
                        "bearer_token_file, tls_server_config.client_ca_file");
        }
        metricsWeb = std::move(*web);
    }
    // OpenSSL is initialised only when a port speaks TLS: a plaintext daemon (loopback) never
    // loads its configuration or touches its code (docs/performance.md). Before the privileges
    // drop: the floor's configuration is read through /proc/self/fd.
    if (!config.tlsCert.empty() || metricsWeb.tls()) {
        if (Status s = enforceTlsFloor(); !s.ok()) {
            return fail(s.error());
        }
    }
    auto privileges = dropPrivileges(config.user);
    if (!privileges) {
        return fail(privileges.error());
    }
    if (privileges->dropped) {
        logger.info("started as root; now running as " + privileges->user + " (uid " +
                    std::to_string(privileges->uid) + ", gid " + std::to_string(privileges->gid) +
                    ")");
    } else if (::geteuid() == 0) {
        logger.warn(
            "running as root: no 'runplane' account and no --user given (install.sh "
            "creates the account; docs/security.md)");
    }

    if (Status s = makeDirectories(config.stateDir, 0700); !s.ok()) {
        return fail("--state-dir " + s.error());
    }
    // The state directory holds run specs (environments) and the spool: owner-only, also when
    // it existed before with a wider mode (docs/security.md).
    if (struct stat st{}; ::stat(config.stateDir.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", st.st_mode & 07777u);
        if (::chmod(config.stateDir.c_str(), 0700) == 0) {
            logger.warn("--state-dir " + config.stateDir + ": mode " + mode +
                        " let other users in; tightened to 0700");
        } else {
            logger.warn("--state-dir " + config.stateDir + ": mode " + mode +
                        " lets other users in and could not be tightened");
        }
    }
    if (Status s = makeDirectories(config.runRoot, 0750); !s.ok()) {
        return fail("--run-root " + s.error());
    }
    if (config.supervisorPath.empty()) {
        config.supervisorPath = selfDir() + "/runplane-supervisor";
    }
    if (::access(config.supervisorPath.c_str(), X_OK) != 0) {
        return fail(
            "--supervisor " + config.supervisorPath +
            ": not an executable (runplane-supervisor must be installed next to runplaned)");
    }

    SpoolOptions spoolOptions;
    spoolOptions.path = config.stateDir + "/spool.sqlite";
    spoolOptions.maxBytes = config.spoolMaxBytes;
    auto spool = Spool::open(spoolOptions);
    if (!spool) {
        // A damaged file stops the daemon: say which file and how to start again.
        return fail("spool " + spoolOptions.path + ": " + spool.error() + "\n  " +
                    spoolRecoveryAdvice(spoolOptions.path));
    }
    for (const std::string& note : (*spool)->permissionNotes()) {
        logger.warn("spool: " + note);
    }
    if (!(*spool)->rollbackNote().empty()) {
        logger.error("spool: " + (*spool)->rollbackNote());
    }
    RunManagerOptions runOptions;
    runOptions.stateDir = config.stateDir;
    runOptions.runRoot = config.runRoot;
    runOptions.supervisorPath = config.supervisorPath;
    runOptions.defaultGraceSeconds = config.stopGraceSeconds;
    auto runs = RunManager::open(runOptions, logger);
    if (!runs) {
        return fail("run records: " + runs.error());
    }

    CollectorOptions collectorOptions;
    collectorOptions.sampleHz = config.sampleHz;
    collectorOptions.stallSeconds = config.stallSeconds;
    collectorOptions.memAlarmBytes = config.memAlarmBytes;
    collectorOptions.memAlarmSeconds = config.memAlarmSeconds;
    collectorOptions.gpuTelemetry = config.gpuTelemetry;
    collectorOptions.roleMemory = config.roleMemory;
    collectorOptions.kernelLog = config.kernelLog;
    collectorOptions.engineMetrics = config.engineMetrics;
    collectorOptions.meminfoPath = config.meminfo;
    if (!config.roleTable.empty()) {
        auto table = RoleTable::load(config.roleTable);
        if (!table) {
            return fail("--role-table: " + table.error());
        }
        collectorOptions.roleTable = std::move(*table);
    }
    collectorOptions.spoolBacklogRecords = config.spoolBacklogRecords;
    Collector collector(collectorOptions, **spool, **runs, logger);
    StreamPump pump;
    WorkPool pool(config.workThreads);
    NodeInventory inventory(config.nodeId, config.gpuTelemetry);
    AuthThrottleOptions throttle;
    throttle.maxFailures = config.authMaxFailures;
    Authenticator auth(token, logger, throttle);
    collector.setOnAppend([&pump] { pump.wake(); });
    collector.start();

    AgentServiceDeps deps;
    deps.nodeId = config.nodeId;
    deps.spool = spool->get();
    deps.runs = runs->get();
    deps.collector = &collector;
    deps.inventory = &inventory;
    deps.pump = &pump;
    deps.pool = &pool;
    deps.auth = &auth;
    deps.logger = &logger;
    deps.gpuTelemetry = config.gpuTelemetry;
    deps.roleTable = &collectorOptions.roleTable;
    AgentService service(deps);

    std::shared_ptr<grpc::ServerCredentials> creds;
    if (!tlsCertPem.empty()) {
        // TLS 1.2 is the floor through the OpenSSL configuration (tls_floor.h).
        grpc::SslServerCredentialsOptions ssl(
            tlsClientCaPem.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                   : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
        ssl.pem_root_certs = tlsClientCaPem;
        ssl.pem_key_cert_pairs.push_back({tlsKeyPem, tlsCertPem});
        creds = grpc::SslServerCredentials(ssl);
    } else {
        creds = grpc::InsecureServerCredentials();
    }

    grpc::EnableDefaultHealthCheckService(true);
    grpc::reflection::InitProtoReflectionServerBuilderPlugin();
    grpc::ServerBuilder builder;
    int boundPort = 0;
    builder.AddListeningPort(config.listen, creds, &boundPort);
    builder.SetMaxReceiveMessageSize(static_cast<int>(config.maxRequestBytes));
    builder.RegisterService(&service);
    std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
    if (!server || boundPort == 0) {
        collector.stop();
        if (!config.tlsCert.empty()) {
            return fail("--listen " + config.listen +
                        ": cannot serve: the certificate/key pair (--tls-cert " + config.tlsCert +
                        ", --tls-key " + config.tlsKey +
                        ") could not be loaded (does the key belong to the certificate?), or the "
                        "address is in use or not local");
        }
        return fail("--listen " + config.listen + ": cannot listen (address in use or not local?)");
    }
    // Health by service name, for grpc-health-probe and Kubernetes probes ("" = the server).
    if (auto* health = server->GetHealthCheckService()) {
        health->SetServingStatus("runplane.v1.Agent", true);
    }
    auto hp = parseHostPort(config.listen, "--listen");
    const std::string host =
        hp->host.find(':') != std::string::npos ? "[" + hp->host + "]" : hp->host;
    std::printf("runplaned listening on %s:%d\n", host.c_str(), boundPort);
    std::fflush(stdout);

    std::unique_ptr<MetricsServer> metrics;
    if (!config.metricsListen.empty()) {
        auto mp = parseHostPort(config.metricsListen, "--metrics-listen");
        MetricsServerOptions metricsOptions;
        metricsOptions.host = mp->host;
        metricsOptions.port = mp->port;
        metricsOptions.web = metricsWeb;
        auto started = MetricsServer::start(
            metricsOptions,
            [&collector, &spool, &config] {
                return renderPrometheus(collector.snapshot(), (*spool)->stats(), config.nodeId);
            },
            logger);
        if (!started) {
            server->Shutdown();
            collector.stop();
            return fail(started.error());
        }
        metrics = std::move(*started);
        std::printf("runplaned metrics on %s://%s:%d/metrics\n", metrics->tls() ? "https" : "http",
                    mp->host.c_str(), metrics->port());
        std::fflush(stdout);
    }
    logger.info("runplaned " + std::string(daemonVersion()) + " node " + config.nodeId +
                " serving on " + host + ":" + std::to_string(boundPort) +
                (config.tlsCert.empty() ? " (plaintext, loopback)" : " (TLS)") +
                (token ? ", bearer token required" : "") + ", state " + config.stateDir +
                ", spool next seq " + std::to_string((*spool)->stats().nextSeq));

    // Serving: after a settling time (the first collector ticks, the first watcher), the code
    // and constants only start-up ran leave the resident set (startup_pages.h).
    timespec settle{3, 0};
    int sig = ::sigtimedwait(&signals, nullptr, &settle);
    if (sig < 0) {
        const ReleasedPages released = releaseStartupPages();
        logger.log(LogLevel::Debug, "released " + std::to_string(released.bytes >> 10) +
                                        " KiB of start-up pages (" +
                                        std::to_string(released.segments) + " mappings)");
    }
    while (sig != SIGINT && sig != SIGTERM) {
        if (sig == SIGHUP) {
            logger.info("SIGHUP ignored (restart the daemon to change its configuration)");
        }
        if (sigwait(&signals, &sig) != 0) {
            break;
        }
    }
    logger.info(std::string("shutting down on ") + (sig == SIGINT ? "SIGINT" : "SIGTERM") +
                "; runs keep running under their supervisors");
    if (auto* health = server->GetHealthCheckService()) {
        health->Shutdown();  // every service NOT_SERVING while the last calls drain
    }
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    collector.stop();
    pump.stop();
    pool.shutdown();
    metrics.reset();
    return 0;
}

}  // namespace runplane::agent
