// The engine against Pinocchio in one C++ process: rnea, aba and crba of the same robot, checked to
// agree, then timed interleaved.
//
//   engine_vs_pinocchio MODEL.engine-model ROBOT.urdf [ROUNDS [CALLS]]
//
// MODEL is the engine's text form of the robot (rd_model_parse; `robot-dynamics engine-model` or
// robot_dynamics.engine.layout.model_text writes it), ROBOT the URDF Pinocchio's parser loads; the
// joints must be the same, in the same order. Pinocchio's armature is set to the engine model's
// rotor inertia and its gravity to the model's, so both compute the same quantities: inverse
// dynamics (no friction), forward dynamics and the joint-space inertia matrix (Pinocchio's upper
// triangle mirrored into the lower one, as the engine returns the full matrix).
//
// Output: one line per algorithm, "name ours_ns pinocchio_ns ratio", the medians over ROUNDS
// rounds of a block of CALLS calls of each library, the two blocks in alternating order, and the
// ratio the median of the rounds' ratios. Exit status 1 when the two disagree by more than 1e-10
// (relative to the larger of 1 and the result's largest entry).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "pinocchio/algorithm/aba.hpp"
#include "pinocchio/algorithm/crba.hpp"
#include "pinocchio/algorithm/rnea.hpp"
#include "pinocchio/parsers/urdf.hpp"

extern "C" {
#include "engine.h"
}

namespace
{

std::string read_text(const char * path)
{
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path);
    std::exit(2);
  }
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

double elapsed_ns(const std::function<void(int)> & call, int calls)
{
  const auto t0 = std::chrono::steady_clock::now();
  for (int k = 0; k < calls; ++k) {
    call(k);
  }
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / calls;
}

double median(std::vector<double> x)
{
  std::sort(x.begin(), x.end());
  const size_t n = x.size();
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/// The median ns of each and the median ratio ours / theirs over `rounds` interleaved rounds.
void time_pair(const char * name, const std::function<void(int)> & ours, const std::function<void(int)> & theirs,
               int rounds, int calls)
{
  std::vector<double> a, b, ratio;
  elapsed_ns(ours, calls);  // warm the caches and the branch predictors
  elapsed_ns(theirs, calls);
  for (int r = 0; r < rounds; ++r) {
    double x, y;
    if (r % 2 == 0) {
      x = elapsed_ns(ours, calls);
      y = elapsed_ns(theirs, calls);
    } else {
      y = elapsed_ns(theirs, calls);
      x = elapsed_ns(ours, calls);
    }
    a.push_back(x), b.push_back(y), ratio.push_back(x / y);
  }
  std::printf("%s %.1f %.1f %.4f\n", name, median(a), median(b), median(ratio));
}

double disagreement(const double * ours, const double * theirs, int n)
{
  double scale = 1.0, worst = 0.0;
  for (int k = 0; k < n; ++k) {
    scale = std::max(scale, std::fabs(theirs[k]));
  }
  for (int k = 0; k < n; ++k) {
    worst = std::max(worst, std::fabs(ours[k] - theirs[k]));
  }
  return worst / scale;
}

}  // namespace

int main(int argc, char ** argv)
{
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL.engine-model ROBOT.urdf [ROUNDS [CALLS]]\n", argv[0]);
    return 2;
  }
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 101;
  const int calls = argc > 4 ? std::atoi(argv[4]) : 200;

  // the engine's model and its data, in the one block rd_model_parse allocates
  const std::string text = read_text(argv[1]);
  char err[512];
  rd_model_size z;
  if (rd_model_text_size(text.c_str(), &z, err, sizeof err) != RD_OK) {
    std::fprintf(stderr, "%s: %s\n", argv[1], err);
    return 2;
  }
  rd_model m;
  void * memory = nullptr;
  if (rd_model_parse(&m, text.c_str(), rd_work_bytes(z.nb, z.nq), &memory, err, sizeof err) != RD_OK) {
    std::fprintf(stderr, "%s: %s\n", argv[1], err);
    return 2;
  }
  rd_work w;
  rd_work_bind(&w, memory, m.nb, m.nq);
  const int nq = m.nq;

  // Pinocchio's model of the same URDF, with the engine model's rotor inertia and gravity
  pinocchio::Model pm;
  pinocchio::urdf::buildModel(argv[2], pm);
  if (pm.nq != nq || pm.nv != nq) {
    std::fprintf(stderr, "Pinocchio has nq %d, nv %d; the engine model %d\n", pm.nq, pm.nv, nq);
    return 2;
  }
  for (int k = 0; k < nq; ++k) {
    const pinocchio::JointIndex j = pm.getJointId(m.joint_name[k]);
    if (j >= (pinocchio::JointIndex)pm.njoints || pm.joints[j].idx_v() != k) {
      std::fprintf(stderr, "joint %s: not at index %d in Pinocchio's model\n", m.joint_name[k], k);
      return 2;
    }
    pm.armature[k] = m.joint[k].Ia;
  }
  pm.gravity.linear(Eigen::Vector3d(m.gravity[0], m.gravity[1], m.gravity[2]));
  pinocchio::Data pd(pm);

  // states: q, qd, qdd uniform in [-1, 1], tau the torques of (q, qd, qdd)
  const int states = 16;
  std::mt19937_64 gen(0);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  std::vector<Eigen::VectorXd> q(states), qd(states), qdd(states), tau(states);
  for (int s = 0; s < states; ++s) {
    q[s].resize(nq), qd[s].resize(nq), qdd[s].resize(nq);
    for (int k = 0; k < nq; ++k) {
      q[s][k] = uni(gen), qd[s][k] = uni(gen), qdd[s][k] = uni(gen);
    }
    tau[s] = pinocchio::rnea(pm, pd, q[s], qd[s], qdd[s]);
  }
  std::vector<double> out(nq), H(nq * nq);
  Eigen::MatrixXd Hp(nq, nq);

  // agreement, every state
  double worst[3] = {0.0, 0.0, 0.0};
  for (int s = 0; s < states; ++s) {
    const rd_input id = {q[s].data(), qd[s].data(), qdd[s].data(), nullptr, nullptr, 0};
    if (rd_rnea(&m, &id, nullptr, out.data(), &w) != RD_OK) {
      std::fprintf(stderr, "rd_rnea failed\n");
      return 1;
    }
    worst[0] = std::max(worst[0], disagreement(out.data(), tau[s].data(), nq));
    const rd_input dd = {q[s].data(), qd[s].data(), nullptr, tau[s].data(), nullptr, 0};
    if (rd_aba(&m, &dd, nullptr, out.data(), &w) != RD_OK) {
      std::fprintf(stderr, "rd_aba failed\n");
      return 1;
    }
    pinocchio::aba(pm, pd, q[s], qd[s], tau[s]);
    worst[1] = std::max(worst[1], disagreement(out.data(), pd.ddq.data(), nq));
    if (rd_crba(&m, q[s].data(), H.data(), &w) != RD_OK) {
      std::fprintf(stderr, "rd_crba failed\n");
      return 1;
    }
    pinocchio::crba(pm, pd, q[s]);
    pd.M.triangularView<Eigen::StrictlyLower>() = pd.M.transpose().triangularView<Eigen::StrictlyLower>();
    Hp = pd.M.transpose();  // row-major, as the engine's H
    worst[2] = std::max(worst[2], disagreement(H.data(), Hp.data(), nq * nq));
  }
  std::printf("agreement %.3g %.3g %.3g\n", worst[0], worst[1], worst[2]);
  if (!(worst[0] <= 1e-10 && worst[1] <= 1e-10 && worst[2] <= 1e-10)) {
    std::fprintf(stderr, "the two libraries disagree (rnea, aba, crba): %g %g %g\n", worst[0], worst[1], worst[2]);
    return 1;
  }

  // timing: the same states in the same order for both
  double sink = 0.0;
  time_pair(
    "rnea",
    [&](int k) {
      const int s = k % states;
      const rd_input in = {q[s].data(), qd[s].data(), qdd[s].data(), nullptr, nullptr, 0};
      rd_rnea(&m, &in, nullptr, out.data(), &w);
      sink += out[0];
    },
    [&](int k) {
      const int s = k % states;
      sink += pinocchio::rnea(pm, pd, q[s], qd[s], qdd[s])[0];
    },
    rounds, calls);
  time_pair(
    "aba",
    [&](int k) {
      const int s = k % states;
      const rd_input in = {q[s].data(), qd[s].data(), nullptr, tau[s].data(), nullptr, 0};
      rd_aba(&m, &in, nullptr, out.data(), &w);
      sink += out[0];
    },
    [&](int k) {
      const int s = k % states;
      sink += pinocchio::aba(pm, pd, q[s], qd[s], tau[s])[0];
    },
    rounds, calls);
  time_pair(
    "crba",
    [&](int k) {
      rd_crba(&m, q[k % states].data(), H.data(), &w);
      sink += H[1];
    },
    [&](int k) {
      pinocchio::crba(pm, pd, q[k % states]);
      pd.M.triangularView<Eigen::StrictlyLower>() = pd.M.transpose().triangularView<Eigen::StrictlyLower>();
      sink += pd.M(1, 0);
    },
    rounds, calls);
  time_pair(
    "crba_upper",
    [&](int k) {
      rd_crba(&m, q[k % states].data(), H.data(), &w);
      sink += H[1];
    },
    [&](int k) {
      pinocchio::crba(pm, pd, q[k % states]);
      sink += pd.M(0, 1);
    },
    rounds, calls);
  std::printf("sink %g\n", sink);
  rd_model_free(&m);
  return 0;
}
