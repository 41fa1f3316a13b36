import CairnProtocol
import Foundation
import Logging
import NIOCore
import ServiceLifecycle

/// Delivers every project's webhooks, beside the HTTP listener: woken by live notices (this instance's and, through
/// the notice channel, the others') and every ``WebhookSettings/pollInterval``. Each webhook is delivered by one
/// instance at a time, under a lease in the database; its cursor moves only when the receiver answers 2xx, so a
/// restart, a killed instance or a lost answer repeats a delivery and never skips one. Writes never wait for it:
/// it only reads the feed.
struct WebhookOutbox: Service {
    let storage: any ServerStorage
    let notifier: ChangeNotifier
    let clock: any WallClock
    let timers: any Clock<Duration>
    let settings: WebhookSettings
    let metrics: ServerMetrics
    let logger: Logger
    /// This instance, as lease owner.
    let owner = "instance-" + UUID().uuidString.lowercased()

    func run() async throws {
        let (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let notices = await notifier.subscribe(project: nil)
        let busy = BusyWebhooks()
        await withDiscardingTaskGroup { group in
            group.addTask { for await _ in notices { wake.yield() } }
            group.addTask { [timers, settings] in
                while (try? await timers.sleep(for: .seconds(settings.pollInterval))) != nil { wake.yield() }
            }
            wake.yield()
            for await _ in wakes.cancelOnGracefulShutdown() {
                for webhook in await due() where await busy.claim(webhook) {
                    group.addTask { await deliver(webhook, busy: busy) }
                }
            }
            group.cancelAll()
        }
    }

    /// The webhooks to look at now: those no other instance holds and whose backoff has passed.
    private func due() async -> [StoredWebhook] {
        let webhooks: [StoredWebhook]
        do { webhooks = try await storage.webhooks(project: nil) } catch {
            logger.warning("webhooks: cannot list them", metadata: ["error": .string(storage.describe(error))])
            return []
        }
        let now = clock.now()
        metrics.webhooksFailing(webhooks.count { settings.status(of: $0, now: now) == "failing" })
        return webhooks.filter { webhook in
            (webhook.nextAttemptAt ?? .distantPast) <= now
                && (webhook.leaseOwner == nil || webhook.leaseOwner == owner || (webhook.leaseUntil ?? .distantPast) < now)
        }
    }

    /// Delivers `webhook` until it has nothing more, another instance holds it, or the server stops; after a failure
    /// it waits its backoff and tries again.
    private func deliver(_ webhook: StoredWebhook, busy: BusyWebhooks) async {
        var waited = false
        delivering: while !Task.isCancelled {
            let now = clock.now()
            let leased: StoredWebhook?
            do {
                leased = try await storage.leaseWebhook(
                    project: webhook.project, name: webhook.name, owner: owner, until: now + settings.effectiveLease, now: now)
            } catch {
                logger.warning("webhooks: cannot take a lease", metadata: ["webhook": .string(webhook.name), "error": .string(storage.describe(error))])
                break delivering
            }
            // Gone, held by another instance, or waiting out a backoff another instance began.
            guard let leased, waited || (leased.nextAttemptAt ?? .distantPast) <= now else { break delivering }
            waited = false
            switch await attempt(leased) {
            case .idle:
                await release(webhook)
                // A wake-up that came while this loop was busy found it so: look once more. Otherwise the loop ends
                // here, in the same step that frees it for the next wake-up.
                guard await busy.continueAfterWake(webhook) else { return }
            case .delivered:
                continue
            case .failed(let delay):
                await release(webhook)
                guard (try? await timers.sleep(for: .seconds(delay))) != nil else { break delivering }
                waited = true
            }
        }
        await release(webhook)
        await busy.release(webhook)
    }

    private enum Outcome { case idle, delivered, failed(retryAfter: TimeInterval) }

    /// One delivery: the next batch posted and its outcome stored.
    private func attempt(_ webhook: StoredWebhook) async -> Outcome {
        let batch: WebhookBatch
        do {
            guard let next = try await WebhookBatch.next(for: webhook, storage: storage, limit: settings.batchSize) else { return .idle }
            batch = next
        } catch {
            if Task.isCancelled || error is CancellationError { return .idle }
            logger.warning("webhooks: cannot read the feed", metadata: ["webhook": .string(webhook.name), "error": .string(storage.describe(error))])
            return .failed(retryAfter: settings.retryBase)
        }
        if batch.changes.isEmpty {
            if batch.through > webhook.cursor { _ = await record(webhook, .delivered(cursor: batch.through, count: 0, at: clock.now())) }
            return .idle
        }
        let body = batch.body(project: webhook.project, webhook: webhook.name)
        let first = batch.changes.first!.row.version, last = batch.changes.last!.row.version
        let request = OutboundRequest(
            url: webhook.url, body: body, secret: webhook.secret, headers: ["Cairn-Delivery": "\(webhook.name):\(first)-\(last)"])
        let failure: String
        do {
            let answer = try await request.send(timeout: .milliseconds(Int64(settings.timeout * 1000)))
            if answer.isSuccess {
                metrics.webhookDelivered(batch.changes.count)
                return await record(webhook, .delivered(cursor: batch.through, count: batch.changes.count, at: clock.now())) ? .delivered : .idle
            }
            failure = "the receiver answered \(answer.status)"
        } catch {
            if Task.isCancelled { return .idle }
            failure = "the receiver could not be reached: \(error)"
        }
        metrics.webhookFailed()
        let delay = settings.retryDelay(afterFailures: webhook.failures + 1)
        let now = clock.now()
        _ = await record(webhook, .failed(error: String(failure.prefix(500)), at: now, retryAt: now + delay))
        logger.info("webhooks: delivery failed", metadata: ["webhook": .string(webhook.name), "error": .string(failure)])
        return .failed(retryAfter: delay)
    }

    /// Stores an attempt; false when the lease was lost (another instance delivers now).
    private func record(_ webhook: StoredWebhook, _ attempt: WebhookAttempt) async -> Bool {
        do { return try await storage.recordAttempt(project: webhook.project, name: webhook.name, owner: owner, attempt) } catch {
            logger.warning("webhooks: cannot store an attempt", metadata: ["webhook": .string(webhook.name), "error": .string(storage.describe(error))])
            return false
        }
    }

    private func release(_ webhook: StoredWebhook) async {
        try? await storage.releaseWebhook(project: webhook.project, name: webhook.name, owner: owner)
    }
}

/// The webhooks this instance is delivering now, so that each has one delivery loop, and whether a wake-up found a
/// loop busy (so that it looks again before it ends, and no change waits for the next poll).
private actor BusyWebhooks {
    /// Per busy webhook, whether a wake-up came since its loop last looked.
    private var woken: [String: Bool] = [:]

    /// Claims the webhook for a new loop; when one runs already, notes the wake-up for it instead.
    func claim(_ webhook: StoredWebhook) -> Bool {
        let key = webhook.project + "/" + webhook.name
        if woken[key] != nil {
            woken[key] = true
            return false
        }
        woken[key] = false
        return true
    }

    /// For a loop with nothing left to deliver: true (clearing the note) when a wake-up came since it last asked, so
    /// it looks again; else the loop ends here, in the same step, and the next wake-up starts a new one.
    func continueAfterWake(_ webhook: StoredWebhook) -> Bool {
        let key = webhook.project + "/" + webhook.name
        guard woken[key] == true else {
            woken[key] = nil
            return false
        }
        woken[key] = false
        return true
    }

    /// The loop ended (a no-op when ``continueAfterWake(_:)`` ended it).
    func release(_ webhook: StoredWebhook) { woken[webhook.project + "/" + webhook.name] = nil }
}
