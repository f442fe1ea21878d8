package dev.xq.runtime.osgi;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

@ObjectClassDefinition(id = "dev.xq.scheduler", name = "XQ scheduler",
        description = "Which scheduling policy decides, and how long it may take per decision")
public @interface SchedulerConfig {

    @AttributeDefinition(name = "Policy", description = "Name of the policy to run (xq:policies lists them). "
            + "'native' lets every queue run. A name not (yet) registered waits for its bundle; meanwhile 'native' decides.")
    String policy() default "hpf";

    @AttributeDefinition(name = "Decision deadline (us)", min = "100", max = "10000000",
            description = "A policy decision that takes longer is stopped being used (the watchdog sets the policy aside)")
    long decisionDeadlineMicros() default 10_000;

    @AttributeDefinition(name = "Inline decisions", description = "Let a policy registered with xq.policy.bounded=true "
            + "decide on the thread that posted the event (an application's submit, a driver's completion) instead of "
            + "waking the scheduler thread: saves an OS wake-up per event, whose tail is milliseconds on a loaded or "
            + "virtual host; the posting thread pays the decision (tens of us). Off: every decision on the scheduler thread.")
    boolean inlineDecisions() default true;

    @AttributeDefinition(name = "Bundles whose policies may decide inline", description = "Symbolic names of the "
            + "bundles whose policies registered with xq.policy.bounded=true may decide on a posting thread (comma "
            + "separated; '*': every bundle). A policy that blocks there holds an application's, a driver's or a "
            + "device's thread for good, so by default only XQ's own policy bundles, whose decisions are tested to be "
            + "short and never to wait; any other bundle's policy decides on the scheduler's thread, where the "
            + "watchdog can replace a stuck thread.")
    String inlinePolicyBundles() default "dev.xq.policy.fixedpriority,dev.xq.policy.drf,dev.xq.policy.edf";

    @AttributeDefinition(name = "Arrival guards", description = "Keep the device clear for queues that arrive on a beat "
            + "(a frame or request every N ms): a queue that such a queue is preferred over (as the policy decided) stops "
            + "launching, shortly before the next foreseen arrival, commands that its owner estimates would still run "
            + "then. Applies to process queues (the interposer enforces it); an application queue at level 2 instead "
            + "launches the commands it expects to end before then without the per-launch cost of holding them in place "
            + "(CUDA's guards). Off: queues launch up to their limits, every launch held.")
    boolean arrivalGuards() default true;

    @AttributeDefinition(name = "Wide beats", description = "A best-effort queue that the policy narrows behind "
            + "latency-critical queues that are all wider than half the device and arrive on a beat (a CUDA graph or a large "
            + "batch every N ms) is, instead, held while they work and run on the whole device between their requests, "
            + "under their arrival guards, where its commands (at that width) fit between their busy periods. Narrowed, "
            + "both halve: the wide tenant runs on half the device and long kernels on the other half take twice as long. "
            + "Without a beat, or with commands too long for the gaps, the queue stays narrowed. While such a queue learns "
            + "its beat (from when it comes back from a pause to its first arrival 600 ms later, or until it shows a beat the other fits or pauses again), the queue "
            + "behind it is held throughout; such spells cost it at most about a ninth of its time. Part of arrival guards; "
            + "for policies that decide space (hpf).")
    boolean wideBeats() default true;

    @AttributeDefinition(name = "Narrowed guards", description = "With wide beats: a best-effort queue left narrowed "
            + "(no width at which its commands fit every wide tenant's gaps while a narrow tenant keeps its reserve) is still "
            + "held while a wide tenant on a beat whose gaps its command fits at its narrowed width works, and guarded against "
            + "that tenant's next arrival between its requests. Off: it runs narrowed through their requests, unguarded (beside a "
            + "half-device GEMM kernel a large batch's kernels did not start until it ended, on an H200).")
    boolean narrowedGuards() default true;

    @AttributeDefinition(name = "Fruitless spells", description = "With wide beats: spells of learning where there is "
            + "nothing to learn (a spell holds the best-effort queues behind a wide tenant for 600 ms while it learns that "
            + "tenant's beat). Off: a wide tenant whose spell ran out without a beat, and that went on arriving without one for "
            + "another 600 ms, begins no new spell until it pauses or shows a beat (requests that come at random); and a "
            + "best-effort queue coming back behind a tenant whose beat is known, but whose gaps its commands do not fit, begins "
            + "none for it. On: both begin spells as before (a GEMM held a fifth of its running time beside a graph service "
            + "with random arrivals, and 747 ms after each return beside a batch on a 150 ms beat, on an H200).")
    boolean fruitlessSpells() default false;

    @AttributeDefinition(name = "Whole beside a reserve", description = "With wide beats and narrowed guards: a best-effort "
            + "queue whose long commands fit the gaps between a wide tenant's requests only on the whole device (not beside "
            + "the reserve a narrow tenant such as an eager decoder keeps, and, narrowed, no wide tenant's gaps) is held while "
            + "that narrow tenant is within a request (arrived in the last 10 ms) and runs on the whole device between the "
            + "wide tenant's requests while it is not; a narrow tenant not seen idle for a second is not waited for. Off (the "
            + "default): left narrowed, its kernels run through the wide tenant's requests. On an H200 with a CUDA graph, an "
            + "eager decoder, bf16 training and 21 ms GEMMs it kept most graph requests clear of the GEMM and training "
            + "gained (0.70-0.74 of native sharing against 0.50-0.64), but the GEMM lost (0.35 against 0.41-0.66) and the "
            + "decoder's P99 rose (47-51 ms against 39-43): an experiment, not yet a default. Since then, where the narrow "
            + "tenant's requests are on a beat (its latest six request starts, after idles of 10 ms or more, within a tenth of "
            + "their median), the command is let onto the whole device only where it ends before the next one; measured "
            + "with that (H200, five mixes of a decoder beside GEMMs): the four-tenant mix's graph 1.07 x its P99 alone "
            + "against 1.30 off, its GEMM 0.21 of native against 0.39, no mix changed from missed to met.")
    boolean wholeBesideReserve() default false;

    @AttributeDefinition(name = "Narrow beats keep a reserve", description = "With wide beats: beside a wide tenant on a "
            + "beat (a CUDA graph, a large batch) and a narrow one on a beat too (an eager decoder, its kernels on a "
            + "fifth of the device), a best-effort queue runs on the device less the narrow one's reserve while only the "
            + "narrow one works, and is held while the wide one does. Off: held while either works (the default until "
            + "session 81). On an H200, on: the fp32 trainer beside a decoder and a graph at 0.99 of native sharing "
            + "(off: 0.82), beside a decoder and a large batch at 1.01 (off: 0.65), the decoder's P99 within 1.10 x "
            + "its standalone either way. A queue whose command fits the wide one's gaps only on the whole device (a "
            + "GEMM beside a graph) is held while either works, as with this off.")
    boolean narrowBeatsKeepReserve() default true;

    @AttributeDefinition(name = "Hold beside a slowed tenant", description = "A narrow latency-critical tenant (an eager "
            + "decoder keeping its reserve of the device) whose kernels fall behind its launches (a lag of 1 ms or more "
            + "between a batch of its commands' last launch and their end, in 2 of its latest 8 requests) has the "
            + "best-effort processes beside it held through its requests; then one at a time is let run beside it again, "
            + "and held for good only if the tenant is slowed again (the cause found), else let run. Space splits "
            + "multiprocessors, not memory bandwidth: beside Triton's memory-bound loop an eager decoder waited 2.8-10 ms "
            + "at P99 at its synchronize for its own kernels, 0.06-0.16 ms beside training and GEMMs (H100). Not for a "
            + "tenant busy more than 60 % of its time; given up for 30 s where holding does not help. An experiment, off "
            + "by default: on an H200 it held a process in 4 of 5 mixes where the decoder's device part was 0.12-0.18 ms "
            + "at P99 (its lag then read the tracker's look, not yet the lower bound it reads now); slow readings in most "
            + "requests left the processes not yet probed held through every request (bf16 training 0.59-0.79 of native "
            + "sharing against 0.93-1.10 off). Fixed (a tenant's start not counted, probes after 8 clean requests in a row, "
            + "no cause named by elimination), on an H100 it stayed quiet in 4 of 5 mixes and on every decoder's start, and "
            + "where it engaged it cleared both processes in 2.3 s: beside Triton the decoder is slowed in a few requests "
            + "of 167, too few for a probe of 8 to find.")
    boolean holdBesideSlowed() default false;

    @AttributeDefinition(name = "Requests at random", description = "With wide beats: a wide tenant (a CUDA graph, a large "
            + "batch) whose latest two returns after a quiet spell (250 ms without a request, or four of its periods) each "
            + "found no beat before the next return (fewer than a quarter of its arrivals on one) is taken for a service whose "
            + "requests come at random: its returns begin no spell of learning and hold nothing behind it through its first "
            + "requests, until a return finds a beat. Off: every return holds the best-effort queues behind it through its next "
            + "four requests while a beat is learnt that never comes (a batch at random gaps of 100 ms on average has a gap "
            + "of 250 ms or more about once in twelve: bf16 training beside it spent 45 % of the run in such holds). On an H200, "
            + "on / off in one run each: that trainer at 1.02 / 0.71 of native sharing (the batch 0.86 / 1.01 x its P99 "
            + "alone), a graph at random beside training or Triton 1.16-1.17 / 1.22-1.69 x; beside 21 ms GEMMs the batch "
            + "1.21 / 0.60 x, the GEMM 0.52 / 0.47 (the spells had held it).")
    boolean randomReturns() default true;

    @AttributeDefinition(name = "Best-effort parts", description = "Best-effort processes with work on a device that the "
            + "node narrows split what they may use in equal parts, one each, in pid order: under MPS two of them on the whole "
            + "device fight over the same multiprocessors and long kernels win (training beside 21 ms GEMMs at 0.05-0.19 of "
            + "native sharing on an H200). Off: each has the whole device (less what the policy reserves), for comparisons.")
    boolean bestEffortParts() default true;

    @AttributeDefinition(name = "Best-effort weights", description = "With best-effort parts: where the wide beats find a "
            + "gap between a wide tenant's requests for one of two to four best-effort processes, their parts are weighed by "
            + "what fits, in sixteenths of the device: the split that maximises the sum of the logarithms of what each gets "
            + "done, a process in a gap counted by the whole commands that fit it at its width (0.85 of the gap, the width "
            + "in the multiprocessors the interposer gives it), the others by their width, or for short commands (1 ms or "
            + "less: launch-bound) by min(1, 2 x width)^0.75. Equal halves leave 21 ms GEMMs one kernel a gap (about 43 ms "
            + "each on half an H200) while a short-command process uses its half throughout. On by default: on the H200 it "
            + "took 23.7 ms GEMMs beside Triton and a large batch from 0.49-0.51 of native sharing to 1.01 (equal parts: "
            + "1.35-1.40 for Triton, weighed 1.16-1.23). Without a weighed cut, two or four processes get equal parts of their own "
            + "size, the last taking what the others leave (48 and 56 of 104 multiprocessors, where a split by count gives 48 "
            + "and 48). false gives equal parts split by count.")
    boolean bestEffortWeights() default true;

    @AttributeDefinition(name = "Best-effort widths", description = "With best-effort weights: where no gap is found "
            + "for any of two to four best-effort processes (beside an eager decoder's reserve, or with no preferred tenant), "
            + "weigh their parts all the same, each by what its width lets it do: long commands in proportion to it, short "
            + "ones (1 ms or less) by min(1, 2 x width)^0.75, once every process's command is known; a GEMM process then "
            + "gets nine sixteenths beside a bf16 trainer's seven instead of halves. On by default (measured on the H200 beside "
            + "an eager decoder: 21 ms GEMMs at 0.80-1.02 of native sharing against 0.72-0.88 with halves, in every one of 13 "
            + "paired readings; the trainers beside them 1.00-1.63; the decoder's tail within the runs' spread). Never beside "
            + "a tenant wider than half the device (a graph, a large batch): there the wide beats' gaps decide and the parts "
            + "are equal until one is found (by width there, GEMMs beside Triton and a large batch did 0.76-0.83 of native "
            + "sharing against 1.00-1.01). false gives equal parts there.")
    boolean bestEffortWidths() default true;

    @AttributeDefinition(name = "Best-effort turns without a gap", description = "With best-effort weights: where no gap is "
            + "found for any of two or three best-effort processes (beside a wide tenant whose requests come at random, or with "
            + "no preferred tenant), they take turns on all of what they may use (50 ms or more each, passed when nothing of "
            + "theirs is in flight) instead of splitting it. A split of multiprocessors does not split memory bandwidth: beside "
            + "a CUDA graph at random a bf16 trainer next to a memory-bound Triton loop ran at 0.72-0.84 of native sharing "
            + "while the Triton loop ran at 1.07-1.37 (H200). Off by default: measured on the H200, turns cost that trainer more "
            + "beside the graph too (0.46-0.47 of native sharing); beside Triton alone (0.54-0.57 against 0.70-0.71 with parts) "
            + "they held nobody then, fixed since, and are not yet measured as built.")
    boolean bestEffortTurnsWithoutGap() default false;

    @AttributeDefinition(name = "Best-effort balance", description = "Whether the node cuts what best-effort processes "
            + "with no gap beside a wide tenant may use by measuring them: each one's rate alone (commands completed a second) "
            + "in spells of 150 ms or more (until its completions have been seen three times, at most 600 ms; the rate taken "
            + "between the first and the latest), one process at a time with the others held, every 8 s (twice as long after each "
            + "round that finds the rates of the last one within 15 % with the cut unmoved, up to 64 s); between them each one's rate on "
            + "its part over a second, and a sixteenth moved from the process that keeps the largest share of its rate alone "
            + "to the one that keeps the smallest, while they differ by more than 12 %. A split of multiprocessors does not "
            + "split memory bandwidth: on half an H200 a bf16 trainer beside a memory-bound Triton loop kept 0.42 of its "
            + "rate alone, Triton 0.61, and the trainer did 0.72 of native sharing. On by default since session 96: on an H100, "
            + "with bestEffortUnbounded, the trainer beside Triton went from 0.55-0.57 of native sharing to 0.76-0.80 (fp32: "
            + "0.66 to 0.85-0.88), three best-effort processes from 0.76/2.58/0.84 to 1.15/1.72/0.93, Triton staying at 1.5 "
            + "or more. Off: the cut by width. An operator's shares (bestEffortShares) come first.")
    boolean bestEffortBalance() default true;

    @AttributeDefinition(name = "Best-effort balance memory", description = "With bestEffortBalance: whether the measured "
            + "cut keeps each process's rate alone (up to 64 s) and each set of processes' cut when the set changes (one "
            + "stopped, or idle for half a second, and back), measures them alone again at once where a process did more than "
            + "1.1 times its rate alone on its part (a rate alone taken low), and moves two sixteenths where one process keeps "
            + "more than 1.5 times the share of its rate alone another keeps, three past 2.25; and a spell alone whose "
            + "process another rule holds for 50 ms or more (the wide beats while a wide tenant's beat is learnt) begins again once "
            + "it is let go (held through 1.2 s of spells, it is not measured that round). On by default since session 102: "
            + "three best-effort processes beside a latency-critical one, stopped by the paired reading 1.5 s of every 3, came back "
            + "one at a time, each a new set, and no weighing ever ended (H100: Triton 2.27 of native sharing, a bf16 trainer "
            + "0.77, GEMMs 0.67); an fp32 trainer's rate alone taken at a third of its true one held the cut away from it for 8 s. "
            + "Off: as before session 102.")
    boolean bestEffortBalanceMemory() default true;

    @AttributeDefinition(name = "Best-effort balance quick", description = "With bestEffortBalance: whether a weighing "
            + "moves the cut at once to where the shares of their rates alone the processes keep would come out equal if "
            + "each one's rate went with its width (up to four sixteenths a process, none cut below half its part at once, at "
            + "least the one sixteenth the 12 % deadband asks for), and counts the rates on the parts over half a second, longer until each process has "
            + "completed 16 commands (at most 2 s). On by default since session 104: the paired reading stops best-effort "
            + "processes 1.5 s of every 3, a weighing of a whole second came once a stop, and an fp32 trainer beside Triton "
            + "and an eager decoder on an H100 took three weighings (9 s of a 10 s run) to go from seven sixteenths to "
            + "eleven: 0.79 of native sharing, Triton 1.89. Off: a sixteenth (two or three where they are far apart, with "
            + "bestEffortBalanceMemory) each second.")
    boolean bestEffortBalanceQuick() default true;

    @AttributeDefinition(name = "Best-effort balance early", description = "With bestEffortBalanceQuick: whether what the "
            + "processes did on their parts before a round of spells alone (a quarter of a second or more, 16 commands each) is "
            + "weighed against the rates alone the round measured as soon as it ends, so that the cut moves then instead of "
            + "a settle and half a second later. On by default since session 105: a new set shares the device half a second "
            + "before its first round, and on an H100 a bf16 trainer beside Triton and an eager decoder kept 0.34 of its rate "
            + "alone on half the device for the 0.65 s after the round until the first jump; its first 1.45 s ran at 0.68 of "
            + "native sharing against 0.9-1.07 later. Off: the first weighing counts from the round's end.")
    boolean bestEffortBalanceEarly() default true;

    @AttributeDefinition(name = "Best-effort balance carry", description = "With bestEffortBalanceQuick: whether a count of "
            + "what the processes do on their parts that a stop cuts short (all of them stopped, or all but one) goes on after "
            + "the stop, on the same processes and cut, where the stop is shorter than a period of spells (8 s); a weighing "
            + "then counts the stretches together. On by default since session 106: beside a GEMM process (8-15 commands a "
            + "second on its part, a weighing waits up to a second for 16), stops of 1.5 s in every 3 dropped each count "
            + "begun before them, one weighing came every 3 s, and the node's first cut held a run's first 3 s (an H100, a bf16 "
            + "trainer at 0.59 and 0.63 of native sharing in its first two stretches, 0.95 and 0.88 after). Off: each stop "
            + "drops the count.")
    boolean bestEffortBalanceCarry() default true;

    @AttributeDefinition(name = "Best-effort balance long commands", description = "With bestEffortBalanceQuick: whether a "
            + "weighing (and the weighing of what was counted before a round of spells) takes a process whose rate on its part "
            + "is timed between whole batches over two gaps or more as counted enough, beside those that completed 16 commands. "
            + "On by default since session 107: a GEMM process beside Triton on an H100 completed about 4 commands in the quarter "
            + "second before the first round (12 a second on half the device, 37 alone), so the first weighing waited for 16 and "
            + "the GEMMs kept 0.33 of their rate alone on the node's first cut for 2.7-2.8 s. Off: every process must complete "
            + "16 commands.")
    boolean bestEffortBalanceLongCommands() default true;

    @AttributeDefinition(name = "Best-effort balance region", description = "With bestEffortBalance: whether each "
            + "process's share kept of its rate alone is weighed by the share of the device that rate was measured on. A "
            + "process of long commands (a GEMM's 20 ms kernels) stays narrowed by the latency-critical tenants' reserve "
            + "while they are open, so its rate alone is its rate on the device less that reserve (half the device beside a "
            + "wide tenant); a process of short commands runs on all of it between their requests. Equal shares of those left "
            + "GEMMs at 0.42-0.56 of native sharing beside a wide or random tenant and Triton, Triton at 1.3-1.9 (H100, "
            + "session 116). On: a long-command process's share counts times (n - r) / n, n the device's multiprocessors, r "
            + "the reserve. On by default since session 118, with bestEffortDeviceFrame (alone it showed no direction in eight "
            + "readings, session 117).")
    boolean bestEffortBalanceRegion() default true;

    @AttributeDefinition(name = "Best-effort balance region, short commands", description = "With "
            + "bestEffortBalanceRegion: whether a process of short commands is weighed by the region too, for the share of "
            + "its last seconds it spent narrowed (a time-weighted mean, time constant 2 s). Short commands are narrowed off a "
            + "latency-critical tenant's reserve only while the tenant works: beside a seldom-busy wide tenant they run on the "
            + "whole device and weigh about 1, beside an eager decoder busy half the time about half their region. Off "
            + "(session 118's way) they weigh 1 whatever: beside a decoder and GEMMs the cut then favoured the GEMMs, bf16 "
            + "training at 0.47-0.99 of native sharing in six readings with the region weighed against 0.86-1.07 in six "
            + "without (H100, sessions 116-119). On by default since session 119; not yet measured on a GPU.")
    boolean bestEffortBalanceRegionShort() default true;

    @AttributeDefinition(name = "Best-effort parts in one frame", description = "Whether the parts of best-effort processes "
            + "are laid out one after another across the device although their reserves differ (off by default). A part is "
            + "given in sixteenths of what its process's reserve leaves it: a GEMM process stays narrowed by a wide tenant's "
            + "reserve while Triton beside it has none between the tenant's requests, and halves of their own regions put them "
            + "on multiprocessors 0-31 and 64-127 of a 132 (32-63 idle), or overlapping, by their pids' order. On: the cut is "
            + "laid out in the narrowest region, processes of long commands first, and the last part runs to the end of its "
            + "own region. Measured on an H200 (session 117, two mixes): Triton on 96 multiprocessors instead of 64 took the "
            + "memory bandwidth the GEMM beside it needed, the GEMM at 0.41 and 0.45 of native sharing against 0.49 and 0.54 "
            + "off, Triton 1.53 and 1.51 against 1.33 and 1.22; so off.")
    boolean bestEffortOneFrame() default false;

    @AttributeDefinition(name = "Best-effort parts in sixteenths of the device", description = "Whether the cut among "
            + "best-effort processes is read in sixteenths of the whole device and laid out across it (on by default; it goes "
            + "before bestEffortOneFrame). Processes narrowed by a latency-critical tenant's reserve (long commands, which "
            + "cannot be held off it when the tenant comes) are laid out first, each within what the reserve leaves it, and the "
            + "others after them to the end of the device, over the reserve, theirs between the tenant's requests; the measured "
            + "cut never grows a narrowed part past its region. Off, a GEMM process beside a wide tenant and Triton gets half of "
            + "its own region, a quarter of the device, and a quarter goes to no one. On by default since session 118 (H100, "
            + "with bestEffortBalanceRegion, ten readings beside a random-arrival graph or chat and Triton): the GEMM at "
            + "0.57-0.70 of native sharing against 0.32-0.52 off, Triton and the tenants alike.")
    boolean bestEffortDeviceFrame() default true;

    @AttributeDefinition(name = "Best-effort balance time slice (us)", min = "0", max = "100000", description = "With "
            + "bestEffortBalance: the GPU's own time slice that the measured cut reckons with, 0 (the default) for none. Under "
            + "native time slicing a process that waits on the device (a synchronize) after s of work gives the device up at "
            + "each wait and gets it back only after each other busy process's slice, so it keeps min(s, slice) / slice of "
            + "what one that seldom waits keeps. With a slice, each process's share kept is weighed over that (s: its device "
            + "time over its waits in its spell alone, as its interposer counts them; the CUDA interposer tells them), and the "
            + "cut aims where native sharing would leave each instead of at equal shares. Fitted on the H100's recorded runs "
            + "(Triton's loop kept 0.62 of a trainer's share natively; slice about 4000 us), not yet run on a GPU: an "
            + "experiment, off by default. Allowed: 0, or 100 to 100000.")
    long bestEffortBalanceSliceMicros() default 0;

    @AttributeDefinition(name = "Best-effort unbounded", description = "Whether a best-effort process with a part of "
            + "the device (in space or in turns, or measured alone for bestEffortBalance) launches without a threshold or window where no queue "
            + "preferred over it (a higher priority) is open on its device, busy or not: its company is best-effort "
            + "processes on other multiprocessors or held for their turn, and nobody waits for what it has in flight. "
            + "A latency-critical process that starts later opens its queue long before its first request, and the "
            + "limits come back at that decision. On by default since session 96: on an H100 beside Triton alone a bf16 "
            + "trainer's default stream had been refused by its window a million times in 12 s; without limits the "
            + "best-effort rates were 0.98-1.08 of those with them (median 1.04), and 1.02-1.05 under bestEffortBalance.")
    boolean bestEffortUnbounded() default true;

    @AttributeDefinition(name = "Off its turn always held", description = "Whether a best-effort process off its turn "
            + "(turns on a wide tenant's gaps, or without a gap) is held whatever the policy decides beside a preferred tenant "
            + "too. With best-effort company only, and during the spells of bestEffortBalance, it always is. Beside a "
            + "preferred tenant the wide beats hold it, and they run only in decisions that narrowed a queue: between the "
            + "tenant's requests the one off its turn runs beside the one whose turn it is. Off by default: every turn of "
            + "the default family was measured so; not yet measured on.")
    boolean offTurnAlwaysHeld() default false;

    @AttributeDefinition(name = "Best-effort shares", description = "Weights for best-effort processes by name "
            + "(XQ_NAME): NAME=WEIGHT[,NAME=WEIGHT...], each weight 1 to 100, each name once. Where every best-effort "
            + "process with work on a device has one, their parts are cut in proportion to the weights (in sixteenths of "
            + "what they may use, each at least one) instead of weighed by what fits or taking turns; where one has none, "
            + "the node weighs them itself. For what the node cannot see: a memory-bound process keeps most of its speed "
            + "on a narrow part and takes the others' memory bandwidth (on an H200 bf16 training beside Triton's row "
            + "softmax ran at 0.72 of native sharing on half the device, beside a GEMM at 1.14 on seven sixteenths). "
            + "Empty (the default): none.")
    String bestEffortShares() default "";

    @AttributeDefinition(name = "Hold beside a narrow tenant", description = "Best-effort processes by name (XQ_NAME): "
            + "NAME[,NAME...], each name once. Each is held in time while a narrow latency-critical tenant above it (an eager "
            + "decoder, keeping its reserve of the device) is within a request, and runs on its part as decided between the "
            + "requests. An experiment, empty (the default) until measured: on an H100 an eager decoder's device part (the "
            + "wait at its synchronize) was 2.8-4.9 ms at P99 beside Triton's memory-bound row softmax running on the other "
            + "multiprocessors wherever its host launched fast, 0.06-0.16 ms in every recorded mix without Triton: space splits "
            + "multiprocessors, not memory bandwidth.")
    String holdBesideNarrow() default "";

    @AttributeDefinition(name = "Arrival linger (us)", min = "0", max = "100000", description = "How long, at most, the "
            + "queues that a periodic queue is preferred over stay held after it went idle early in its busy period "
            + "(before three quarters of its usual arrival-to-idle time; never more than half of that): its owner is "
            + "most likely late with its next command, which would otherwise wait behind theirs. Its next submit ends "
            + "the linger; a queue whose lingers keep running out gets none for a while. Part of arrival guards. 0: off.")
    long arrivalLingerMicros() default 300;

    @AttributeDefinition(name = "Arrival grace (us)", min = "0", max = "100000", description = "How long after a periodic "
            + "queue's foreseen arrival (give or take its spread) the guards it gives still hold; after that it counts as "
            + "late or gone and the guarded queues launch as before. It must cover the node's own reaction to an arrival "
            + "(its word, the decision, the gate written), or the guarded queues launch freely between the guard's end "
            + "and the gate's close. A guarded queue whose commands are longer than four times this waits a quarter of its "
            + "command instead (a request a little late must not meet a long kernel let go just before it), and where the "
            + "node has lately been slower than this to react to arrivals (the P99 of its latest reactions, up to "
            + "arrivalReactionGraceMicros) the guards hold that long. It costs them only when the periodic queue skips an "
            + "arrival, and is at most a quarter of its period; 0 turns the wait off for every queue. Part of arrival guards.")
    long arrivalGraceMicros() default 1000;

    @AttributeDefinition(name = "Arrival grace from the node's reaction, at most (us)", min = "0", max = "100000",
            description = "How far the node's own reaction to arrivals lately (the P99 of its latest 1,024 that held "
            + "others, once 200 are known) may lengthen the arrival grace: a guard must not lapse before the node has held "
            + "the guarded queues for an arrival on time, or they launch in between and the arriving queue waits behind "
            + "that. A slower tail than this is a host in trouble, and holding longer for it would cost the guarded queues "
            + "more than it saves. 0: the configured grace only. Part of arrival guards.")
    long arrivalReactionGraceMicros() default 5000;

    @AttributeDefinition(name = "Alone window (us)", min = "0", max = "1000000", description = "How much estimated work "
            + "an application queue may keep on the hardware while no other open queue (of another group or priority) "
            + "shares its device: the threshold is lifted and the window widened to this, so that host stalls shorter "
            + "than it do not idle the device. A queue that opens on the device then waits for at most this much of the "
            + "other's work, once. 0: limits always apply. Process queues are unthrottled while alone; application queues at "
            + "preemption level 3 have no window to widen (a suspend stops their launched work) and keep their threshold.")
    long aloneWindowMicros() default 2_000;

    @AttributeDefinition(name = "Guarded window (us)", min = "0", max = "100000", description = "The window of a process "
            + "queue while an arrival guard is in force on it (the guard keeps its work clear of the foreseen arrival): "
            + "widened to this, the threshold lifted, until the guard is lifted. 0: the queue's own window. Part of arrival guards.")
    long guardedWindowMicros() default 2_000;

    @AttributeDefinition(name = "Narrowed window (us)", min = "0", max = "100000", description = "The window of a process "
            + "queue while the node narrows it to a part of its device and a queue wider than half the device, preferred "
            + "over it, is open there (busy or not): what that queue waits for when it arrives and holds it. The threshold "
            + "is lifted; the queue's own window if that is wider; a queue without a window stays without one. With no such "
            + "queue open, a narrowed queue has the alone window (nobody waits for its work). 0: unbounded while narrowed.")
    long narrowedWindowMicros() default 500;

    @AttributeDefinition(name = "On top", description = "Let the queue that the policy keeps on top of its device "
            + "(every other queue there, of another group or priority, has been held for it, and it was never held for "
            + "another) keep the alone window of work in flight, application and process queues alike, so that a host "
            + "stall shorter than that does not idle the device. The first time the policy holds it for another queue, "
            + "that queue waits for at most the alone window of its work, once, and the usual limits apply from then on. "
            + "Off: only a queue alone gets the alone window.")
    boolean onTop() default true;

    @AttributeDefinition(name = "Await spin (us)", min = "-1", max = "100000", description = "How long Submission.await "
            + "spins before and after a command's expected end instead of parking, so that the waiting thread is running "
            + "when the completion comes (a parked thread is woken tens of microseconds later). -1: automatic (100 us where "
            + "the host has at least 8 hardware threads, else 0); 0: await parks at once.")
    long awaitSpinMicros() default -1;
}
