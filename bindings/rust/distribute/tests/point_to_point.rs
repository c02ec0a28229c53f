//! Send and receive (blocking and not), the uneven all-to-all, ANY_SOURCE and the
//! source of a receive, between ranks 0 and 1 of two contexts on two threads;
//! mismatches and bad arguments. Every rank returns what it saw; the asserts run
//! after both threads ended, against values computed here.
use distribute::{sys, Blocks, Error, ANY_SOURCE, TAG_MAX};

mod common;
use common::two_ranks;

/// What rank `rank` sends to its peer as message `n`.
fn message(rank: i32, n: usize, len: usize) -> Vec<f64> {
    (0..len).map(|i| (rank as f64 + 1.0) * 1000.0 + n as f64 * 10.0 + i as f64 * 0.5).collect()
}

#[test]
fn blocking_send_and_recv_carry_data_both_ways() {
    let results = two_ranks(|rank, world, _| -> Result<(Vec<f64>, Vec<i32>, i32), Error> {
        let peer = 1 - rank;
        let mut floats = vec![0.0f64; 1031];
        let mut ints = vec![0i32; 3];
        let from = if rank == 0 {
            world.send(&message(0, 0, 1031), peer, 5)?;
            world.send(&[7i32, -8, 9], peer, TAG_MAX)?;
            let from = world.recv(&mut floats, peer, 0)?;
            world.recv(&mut ints, peer, 1)?;
            from
        } else {
            let from = world.recv(&mut floats, peer, 5)?;
            world.recv(&mut ints, peer, TAG_MAX)?;
            world.send(&message(1, 0, 1031), peer, 0)?;
            world.send(&[i32::MIN, 0, i32::MAX], peer, 1)?;
            from
        };
        Ok((floats, ints, from))
    });
    let (floats, ints, from) = results[0].clone().expect("rank 0");
    assert_eq!((floats, ints, from), (message(1, 0, 1031), vec![i32::MIN, 0, i32::MAX], 1));
    let (floats, ints, from) = results[1].clone().expect("rank 1");
    assert_eq!((floats, ints, from), (message(0, 0, 1031), vec![7, -8, 9], 0));
}

#[test]
fn receives_match_by_tag_and_keep_the_order_of_one_tag() {
    let results = two_ranks(|rank, world, _| -> Result<Vec<Vec<f64>>, Error> {
        if rank == 0 {
            // Non-blocking sends, so that the receiver's order cannot hold them up.
            let requests = vec![
                world.send_start(message(0, 0, 64), 1, 1)?,
                world.send_start(message(0, 1, 64), 1, 2)?,
                world.send_start(message(0, 2, 64), 1, 3)?,
                world.send_start(message(0, 3, 64), 1, 3)?,
                world.send_start(Vec::<f64>::new(), 1, 4)?,
            ];
            let sent: Result<Vec<_>, _> = requests.into_iter().map(|r| r.wait()).collect();
            Ok(sent?)
        } else {
            let mut received = Vec::new();
            for tag in [4, 3, 2, 3, 1] {
                let len = if tag == 4 { 0 } else { 64 };
                let mut data = vec![0.0; len];
                world.recv(&mut data, 0, tag)?;
                received.push(data);
            }
            Ok(received)
        }
    });
    let sent = results[0].clone().expect("rank 0");
    assert_eq!(sent[1], message(0, 1, 64), "a send's request gives its buffer back");
    let received = results[1].clone().expect("rank 1");
    let expected = vec![Vec::new(), message(0, 2, 64), message(0, 1, 64), message(0, 3, 64), message(0, 0, 64)];
    assert_eq!(received, expected);
}

#[test]
fn any_source_receives_tell_the_sender() {
    let results = two_ranks(|rank, world, _| -> Result<Vec<(Vec<u64>, i32)>, Error> {
        if rank == 1 {
            world.send(&[11u64, 12], 0, 9)?;
            world.send(&[13u64, 14], 0, 9)?;
            let mut request = world.send_start(vec![15u64], 0, 10)?;
            request.wait_timeout(std::time::Duration::from_secs(30))?;
            let not_a_receive = request.source().expect_err("a send has no source");
            assert_eq!(not_a_receive.status(), sys::DIST_ERR_INVALID_ARGUMENT, "{not_a_receive}");
            request.wait()?;
            return Ok(Vec::new());
        }
        let mut blocking = vec![0u64; 2];
        let from = world.recv(&mut blocking, ANY_SOURCE, 9)?;
        let second = world.recv_start(vec![0u64; 2], ANY_SOURCE, 9)?.wait_with_source()?;
        let mut third = world.recv_start(vec![0u64; 1], ANY_SOURCE, 10)?;
        while !third.wait_timeout(std::time::Duration::from_secs(30))? {}
        let source = third.source()?;
        Ok(vec![(blocking, from), second, (third.wait()?, source)])
    });
    results[1].clone().expect("rank 1");
    let received = results[0].clone().expect("rank 0");
    assert_eq!(received, vec![(vec![11, 12], 1), (vec![13, 14], 1), (vec![15], 1)]);
}

#[test]
fn a_count_or_dtype_mismatch_fails_the_receive_with_the_library_s_message() {
    let results = two_ranks(|rank, world, _| -> (Result<(), Error>, Result<(), Error>) {
        if rank == 0 {
            let first = world.send(&[1.0f32; 5], 1, 0);
            let second = world.send(&[1i32; 4], 1, 1);
            (first, second)
        } else {
            let mut longer = [0.0f32; 6];
            let mut other_type = [0.0f32; 4];
            (world.recv(&mut longer, 0, 0).map(|_| ()), world.recv(&mut other_type, 0, 1).map(|_| ()))
        }
    });
    let (count, dtype) = &results[0];
    assert!(count.is_ok() && dtype.is_ok(), "the sends complete: {count:?} {dtype:?}");
    let (count, dtype) = &results[1];
    for error in [count.as_ref().unwrap_err(), dtype.as_ref().unwrap_err()] {
        assert_eq!(error.status(), sys::DIST_ERR_MISMATCH, "{error}");
        assert!(error.is_peer_failure());
        assert!(!error.message().is_empty());
    }
    assert!(count.as_ref().unwrap_err().message().contains('5'), "names the sender's count: {count:?}");
}

#[test]
fn bad_peers_and_tags_are_refused() {
    let (_cluster, context) = common::single();
    let world = context.world().unwrap();
    let mut data = [0.0f32; 2];
    let cases: Vec<(Result<i32, Error>, &str)> = vec![
        (world.send(&data, 0, 0).map(|()| 0), "send to oneself"),
        (world.recv(&mut data, 0, 0), "receive from oneself"),
        (world.send(&data, 1, 0).map(|()| 0), "peer out of range"),
        (world.recv(&mut data, -2, 0), "negative peer"),
        (world.send(&data, ANY_SOURCE, 0).map(|()| 0), "ANY_SOURCE to send"),
        (world.send(&data, 0, -1).map(|()| 0), "negative tag"),
        (world.recv_start(vec![0u8; 1], 7, 0).map(|_| 0), "a request for a bad peer"),
    ];
    for (result, case) in cases {
        let error = result.expect_err(case);
        assert_eq!(error.status(), sys::DIST_ERR_INVALID_ARGUMENT, "{case}: {error}");
        assert!(!error.message().is_empty(), "{case}");
    }
}

/// Block counts of an uneven all-to-all: rank i sends COUNTS[i][j] elements to j.
const COUNTS: [[usize; 2]; 2] = [[3, 0], [4, 5]];

/// The elements rank `from` sends to rank `to`.
fn block(from: usize, to: usize) -> Vec<i64> {
    (0..COUNTS[from][to]).map(|k| (from * 100 + to * 10 + k) as i64 - 50).collect()
}

#[test]
fn all_to_all_v_moves_uneven_blocks_with_zeros_packed_and_at_offsets() {
    // Blocking packed, blocking at offsets, non-blocking packed.
    type Received = (Vec<i64>, Vec<i64>, Vec<i64>);
    let results = two_ranks(|rank, world, _| -> Result<Received, Error> {
        let me = rank as usize;
        let send: Vec<i64> = (0..2).flat_map(|to| block(me, to)).collect();
        let send_blocks = Blocks::packed(&COUNTS[me]);
        let recv_counts = [COUNTS[0][me], COUNTS[1][me]];
        let mut packed = vec![-1i64; recv_counts.iter().sum()];
        world.all_to_all_v(&send, &send_blocks, &mut packed, &Blocks::packed(&recv_counts))?;
        // The same into gaps: block 1 first, then two untouched elements, then block 0.
        let offsets = [recv_counts[1] + 2, 0];
        let at = Blocks::at(&recv_counts, &offsets);
        let mut gapped = vec![-1i64; at.extent()];
        world.all_to_all_v(&send, &send_blocks, &mut gapped, &at)?;
        let started = world.all_to_all_v_start(send, send_blocks, vec![-1i64; packed.len()], Blocks::packed(&recv_counts))?;
        Ok((packed, gapped, started.wait()?))
    });
    for (rank, result) in results.into_iter().enumerate() {
        let (packed, gapped, started) = result.unwrap_or_else(|e| panic!("rank {rank}: {e}"));
        let expected: Vec<i64> = (0..2).flat_map(|from| block(from, rank)).collect();
        assert_eq!(packed, expected, "rank {rank}");
        assert_eq!(started, expected, "rank {rank}, non-blocking");
        let mut gapped_expected = block(1, rank);
        gapped_expected.extend([-1, -1]);
        gapped_expected.extend(block(0, rank));
        assert_eq!(gapped, gapped_expected, "rank {rank}, at offsets");
    }
}

#[test]
fn all_to_all_v_counts_that_disagree_are_a_mismatch() {
    let results = two_ranks(|rank, world, _| {
        // Rank 0 sends 2 elements to rank 1, which expects 3.
        let (send_counts, recv_counts) = if rank == 0 { ([1, 2], [1, 2]) } else { ([2, 1], [1, 3]) };
        let send = vec![1.5f32; 3];
        let mut recv = vec![0.0f32; 4];
        world.all_to_all_v(&send, &Blocks::packed(&send_counts), &mut recv, &Blocks::packed(&recv_counts))
    });
    let errors: Vec<_> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert!(!errors.is_empty(), "somebody must see the mismatch: {results:?}");
    for error in errors {
        assert_eq!(error.status(), sys::DIST_ERR_MISMATCH, "{error}");
        assert!(!error.message().is_empty());
    }
}

#[test]
fn all_to_all_v_bad_arguments_are_refused() {
    let (_cluster, context) = common::single();
    let world = context.world().unwrap();
    let send = [1u32, 2, 3];
    let mut recv = [0u32; 3];
    world.all_to_all_v(&send, &Blocks::packed(&[3]), &mut recv, &Blocks::packed(&[3])).expect("one rank: a copy");
    assert_eq!(recv, send);
    let cases = [
        (Blocks::packed(&[3, 0]), Blocks::packed(&[3]), "2 counts"),
        (Blocks::packed(&[3]), Blocks::at(&[3], &[0, 0]), "2 offsets"),
        (Blocks::packed(&[4]), Blocks::packed(&[4]), ""),
        (Blocks::packed(&[3]), Blocks::at(&[3], &[1]), ""),
    ];
    for (send_blocks, recv_blocks, expected) in cases {
        let error = world.all_to_all_v(&send, &send_blocks, &mut recv, &recv_blocks).expect_err("bad blocks");
        assert_eq!(error.status(), sys::DIST_ERR_INVALID_ARGUMENT, "{error}");
        assert!(error.message().contains(expected) && !error.message().is_empty(), "{error}");
    }
}
