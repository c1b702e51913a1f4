// The CRISP-style Cartesian impedance law on Pinocchio (crisp_style_impedance.hpp): the sequence of
// Pinocchio calls and Eigen operations of CRISP's update(), its matrices dynamic-size as there.
#include "crisp_style_impedance.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <unordered_set>

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <Eigen/SVD>

#include "pinocchio/algorithm/aba.hpp"
#include "pinocchio/algorithm/compute-all-terms.hpp"
#include "pinocchio/algorithm/frames.hpp"
#include "pinocchio/algorithm/kinematics.hpp"
#include "pinocchio/algorithm/rnea.hpp"
#include "pinocchio/parsers/urdf.hpp"
#include "pinocchio/spatial.hpp"

namespace robot_dynamics_control::bench
{

namespace
{

/// The damped pseudo-inverse V diag(s / (s^2 + eps^2)) U^T by a full JacobiSVD, a new matrix each call.
Eigen::MatrixXd damped_pinv(const Eigen::MatrixXd & a, double eps)
{
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(a, Eigen::ComputeFullU | Eigen::ComputeFullV);
  const Eigen::VectorXd s = svd.singularValues();
  Eigen::MatrixXd inv_s = Eigen::MatrixXd::Zero(svd.matrixV().cols(), svd.matrixU().rows());
  for (Eigen::Index i = 0; i < s.size(); ++i) {
    inv_s(i, i) = s[i] / (s[i] * s[i] + eps * eps);
  }
  return svd.matrixV() * inv_s * svd.matrixU().transpose();
}

/// tau_prev + (tau - tau_prev) clipped to +-step, a new vector.
Eigen::VectorXd rate_limited(const Eigen::VectorXd & tau, const Eigen::VectorXd & tau_prev, double step)
{
  Eigen::VectorXd change = tau - tau_prev;
  Eigen::VectorXd clipped = change.cwiseMin(step).cwiseMax(-step);
  return tau_prev + clipped;
}

}  // namespace

CrispStyleParameters crisp_defaults(const double stiffness[6], size_t nq, double null_stiffness)
{
  CrispStyleParameters p{};
  for (int i = 0; i < 6; ++i) {
    p.stiffness[i] = stiffness[i];
    p.damping[i * 6 + i] = 2.0 * std::sqrt(stiffness[i]);
    p.error_clip[i] = i < 3 ? 0.1 : 0.5;
  }
  p.null_stiffness.assign(nq, null_stiffness);
  p.null_damping.assign(nq, 2.0 * std::sqrt(null_stiffness));
  p.null_max_tau = 5.0;
  p.regularization = 1e-6;
  p.operational_space_regularization = 0.01;
  p.max_delta_tau = 0.5;
  return p;
}

struct CrispStyleImpedance::Impl
{
  std::vector<std::string> joints;
  const std::unordered_set<std::string> continuous{"JointModelRUBX", "JointModelRUBY", "JointModelRUBZ"};
  pinocchio::Model model;
  pinocchio::Data data;
  pinocchio::FrameIndex frame = 0;
  CrispStyleParameters params{};

  Eigen::MatrixXd stiffness = Eigen::MatrixXd::Zero(6, 6), damping = Eigen::MatrixXd::Zero(6, 6);
  Eigen::MatrixXd null_stiffness, null_damping, Id_nv, J_pinv, nullspace_projection;
  Eigen::Matrix<double, 6, 6> Mx_inv = Eigen::Matrix<double, 6, 6>::Zero(), Mx = Eigen::Matrix<double, 6, 6>::Zero();
  pinocchio::Data::Matrix6x J;
  Eigen::VectorXd q, q_pin, dq, q_ref, dq_ref, error = Eigen::VectorXd::Zero(6), max_delta = Eigen::VectorXd::Zero(6);
  Eigen::VectorXd tau_task, tau_secondary, tau_nullspace, tau_coriolis, tau_gravity, tau_d, tau_previous;
  Eigen::Vector3d target_position = Eigen::Vector3d::Zero();
  Eigen::Quaterniond target_orientation = Eigen::Quaterniond::Identity();
  pinocchio::SE3 end_effector_pose = pinocchio::SE3::Identity();
};

CrispStyleImpedance::CrispStyleImpedance(
  const std::string & urdf, const std::vector<std::string> & joints, const std::string & frame)
: impl_(std::make_unique<Impl>())
{
  Impl & s = *impl_;
  s.joints = joints;
  pinocchio::urdf::buildModelFromXML(urdf, s.model);
  for (const auto & name : joints) {
    if (!s.model.existJointName(name)) {
      throw std::runtime_error("CRISP-style law: Pinocchio's model has no joint '" + name + "'");
    }
  }
  if (s.model.nv != static_cast<int>(joints.size()) || !s.model.existFrame(frame)) {
    throw std::runtime_error("CRISP-style law: expected " + std::to_string(joints.size()) +
                             " joints and a frame '" + frame + "', Pinocchio's model has " +
                             std::to_string(s.model.nv) + " velocities" + (s.model.existFrame(frame) ? "" : " and no such frame"));
  }
  s.data = pinocchio::Data(s.model);
  s.frame = s.model.getFrameId(frame);
  const Eigen::Index nv = s.model.nv;
  s.q = s.dq = s.q_ref = s.dq_ref = s.tau_previous = Eigen::VectorXd::Zero(nv);
  s.q_pin = Eigen::VectorXd::Zero(s.model.nq);
  s.J = pinocchio::Data::Matrix6x::Zero(6, nv);
  s.J_pinv = Eigen::MatrixXd::Zero(nv, 6);
  s.Id_nv = Eigen::MatrixXd::Identity(nv, nv);
  s.nullspace_projection = Eigen::MatrixXd::Identity(nv, nv);
  s.null_stiffness = s.null_damping = Eigen::MatrixXd::Zero(nv, nv);
  s.tau_task = s.tau_secondary = s.tau_nullspace = s.tau_coriolis = s.tau_gravity = s.tau_d = Eigen::VectorXd::Zero(nv);
}

CrispStyleImpedance::~CrispStyleImpedance() = default;

void CrispStyleImpedance::set_parameters(const CrispStyleParameters & p)
{
  Impl & s = *impl_;
  s.params = p;
  s.stiffness.setZero();
  for (int i = 0; i < 6; ++i) {
    s.stiffness(i, i) = p.stiffness[i];
    for (int j = 0; j < 6; ++j) {
      s.damping(i, j) = p.damping[i * 6 + j];
    }
  }
  s.null_stiffness.setZero();
  s.null_damping.setZero();
  for (Eigen::Index j = 0; j < s.model.nv; ++j) {
    s.null_stiffness(j, j) = p.null_stiffness[static_cast<size_t>(j)];
    s.null_damping(j, j) = p.null_damping[static_cast<size_t>(j)];
  }
}

void CrispStyleImpedance::set_target(const double T[16])
{
  Eigen::Matrix3d R;
  R << T[0], T[1], T[2], T[4], T[5], T[6], T[8], T[9], T[10];
  impl_->target_position << T[3], T[7], T[11];
  impl_->target_orientation = Eigen::Quaterniond(R);
}

void CrispStyleImpedance::set_posture(const double * q_ref)
{
  impl_->q_ref = Eigen::Map<const Eigen::VectorXd>(q_ref, impl_->model.nv);
}

void CrispStyleImpedance::set_previous(const double * tau)
{
  impl_->tau_previous = Eigen::Map<const Eigen::VectorXd>(tau, impl_->model.nv);
}

bool CrispStyleImpedance::update(const double * q_in, const double * qd_in)
{
  Impl & s = *impl_;
  const pinocchio::Model & model = s.model;
  pinocchio::Data & data = s.data;
  // the state, joint by joint through the model's joint of each name
  for (size_t i = 0; i < s.joints.size(); ++i) {
    auto joint_name = s.joints[i];
    auto joint_id = model.getJointId(joint_name);
    auto joint = model.joints[joint_id];
    s.q[static_cast<Eigen::Index>(i)] = q_in[i];
    if (s.continuous.count(joint.shortname())) {
      s.q_pin[joint.idx_q()] = std::cos(q_in[i]);
      s.q_pin[joint.idx_q() + 1] = std::sin(q_in[i]);
    } else {
      s.q_pin[joint.idx_q()] = q_in[i];
    }
    s.dq[static_cast<Eigen::Index>(i)] = qd_in[i];
  }

  pinocchio::forwardKinematics(model, data, s.q_pin, s.dq);
  pinocchio::updateFramePlacements(model, data);
  s.end_effector_pose = data.oMf[s.frame];
  if (!s.end_effector_pose.translation().allFinite() || !s.end_effector_pose.rotation().allFinite()) {
    return false;
  }
  // the pose error in base axes, translation and rotation apart, clipped per axis
  s.error.head(3) = s.target_position - s.end_effector_pose.translation();
  s.error.tail(3) = pinocchio::log3(s.target_orientation.toRotationMatrix() * s.end_effector_pose.rotation().transpose());
  s.max_delta << s.params.error_clip[0], s.params.error_clip[1], s.params.error_clip[2], s.params.error_clip[3],
    s.params.error_clip[4], s.params.error_clip[5];
  s.error = s.error.cwiseMax(-s.max_delta).cwiseMin(s.max_delta);

  s.J.setZero();
  pinocchio::computeFrameJacobian(model, data, s.q_pin, s.frame, pinocchio::LOCAL_WORLD_ALIGNED, s.J);
  s.J_pinv = damped_pinv(s.J, s.params.regularization);
  // the task inertia by the inverse mass matrix, and the dynamically consistent projector
  pinocchio::computeMinverse(model, data, s.q_pin);
  data.Minv.triangularView<Eigen::StrictlyLower>() = data.Minv.transpose().triangularView<Eigen::StrictlyLower>();
  s.Mx_inv = s.J * data.Minv * s.J.transpose();
  s.Mx = damped_pinv(s.Mx_inv, s.params.operational_space_regularization);
  auto J_bar = data.Minv * s.J.transpose() * s.Mx;
  s.nullspace_projection = s.Id_nv - s.J.transpose() * J_bar.transpose();

  s.tau_task << s.J.transpose() * (s.stiffness * s.error - s.damping * (s.J * s.dq));
  s.tau_secondary << s.null_stiffness * (s.q_ref - s.q) + s.null_damping * (s.dq_ref - s.dq);
  s.tau_nullspace << s.nullspace_projection * s.tau_secondary;
  s.tau_nullspace = s.tau_nullspace.cwiseMin(s.params.null_max_tau).cwiseMax(-s.params.null_max_tau);

  pinocchio::computeAllTerms(model, data, s.q_pin, s.dq);
  s.tau_coriolis = pinocchio::computeCoriolisMatrix(model, data, s.q_pin, s.dq) * s.dq;
  s.tau_gravity = pinocchio::computeGeneralizedGravity(model, data, s.q_pin);

  s.tau_d << s.tau_task + s.tau_nullspace + s.tau_coriolis + s.tau_gravity;
  s.tau_d = rate_limited(s.tau_d, s.tau_previous, s.params.max_delta_tau);
  s.tau_previous = s.tau_d;
  return true;
}

const double * CrispStyleImpedance::tau() const
{
  return impl_->tau_d.data();
}

void CrispStyleImpedance::frame_pose(double T[16]) const
{
  const pinocchio::SE3 & X = impl_->end_effector_pose;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      T[i * 4 + j] = X.rotation()(i, j);
    }
    T[i * 4 + 3] = X.translation()[i];
    T[12 + i] = 0.0;
  }
  T[15] = 1.0;
}

}  // namespace robot_dynamics_control::bench
